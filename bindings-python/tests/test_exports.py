"""What the installed wheel exports: no test hook (a leading underscore, a panic, an FFI floor)."""

import royaltykit
from royaltykit import _native


def _hooks(module: object) -> list[str]:
    names = set(dir(module)) | set(getattr(module, "__all__", []))
    private = [n for n in names if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))]
    return sorted(private + [n for n in names if "panic" in n.lower() or "floor" in n.lower()])


def test_no_test_only_name_is_exported() -> None:
    assert len(royaltykit.__all__) > 40
    assert [n for n in royaltykit.__all__ if n.startswith("_")] == []
    assert _hooks(_native) == []
    # the package's two private modules: the compiled core, and the stores' operation drivers
    # (a submodule, set on the package once the receivers or stores load it)
    assert [n for n in _hooks(royaltykit) if n not in ("_native", "_ops")] == []


def test_the_package_exports_every_native_name_and_error() -> None:
    from royaltykit import errors, receiver

    assert sorted(royaltykit.__all__) == sorted(_native.__all__ + errors.__all__ + receiver.__all__)


def test_the_receivers_load_on_first_use() -> None:
    import subprocess
    import sys

    script = (
        "import sys, royaltykit\n"
        "assert 'royaltykit.receiver' not in sys.modules, 'import royaltykit loaded the receivers'\n"
        "assert 'WebhookReceiver' in dir(royaltykit)\n"
        "from royaltykit import WebhookReceiver, RedisDedupStore\n"
        "from royaltykit import receiver\n"
        "assert WebhookReceiver is receiver.WebhookReceiver and RedisDedupStore is receiver.RedisDedupStore\n"
        "try:\n"
        "    royaltykit.NoSuchName\n"
        "except AttributeError as e:\n"
        "    assert 'NoSuchName' in str(e)\n"
        "else:\n"
        "    raise AssertionError('an unknown name must raise AttributeError')\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
