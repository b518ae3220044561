"""tests/vectors/export.json against the installed wheel."""

import pytest
import royaltykit as rk
from conftest import load

V = load("export.json")


@pytest.mark.parametrize("c", V["transitions"], ids=lambda c: f"{c['state']}-{c['command']}")
def test_transition(c):
    assert rk.export_state(c["state"]).known is c["state_known"]
    if "error" in c:
        with pytest.raises(rk.ExportStateError) as info:
            rk.validate_export_command(c["state"], c["command"])
        assert (info.value.code, info.value.allowed) == (c["error"], c["allowed"])
        assert c["command"] in str(info.value)
    else:
        assert rk.validate_export_command(c["state"], c["command"]) == c["expected_state"]


@pytest.mark.parametrize("c", V["poll"], ids=lambda c: f"{c['state']}-{c['attempt']}")
def test_poll(c):
    run = lambda: rk.export_poll_decision(c["state"], c["attempt"], random=c["random"],  # noqa: E731
                                          max_polls=c.get("max_polls"), max_unknown_polls=c.get("max_unknown_polls"))
    if "error" in c:
        with pytest.raises(rk.InvalidArgumentError):
            run()
        return
    d = run()
    assert d.action == c["expected"]["action"] and d.delay_seconds == pytest.approx(c["expected"]["delay_seconds"])


@pytest.mark.parametrize("c", V["download"], ids=lambda c: c["comment"])
def test_download(c):
    run = lambda: rk.check_export_download(c["status"], [tuple(h) for h in c["headers"]], c.get("body", ""))  # noqa: E731
    if "error" not in c:
        assert run() is None
    elif c["error"] == "api_error":
        with pytest.raises(rk.ApiError) as info:
            run()
        x = c["api_error"]
        assert (info.value.kind, info.value.declared, info.value.body_code) == (x["kind"], x["declared"], x["body_code"])
    else:
        with pytest.raises(rk.ExportDownloadError) as info:
            run()
        assert info.value.code == c["error"]


@pytest.mark.parametrize("c", V["list_query"], ids=lambda c: c["comment"])
def test_list_query(c):
    kwargs = dict(c["query"])
    if c.get("error") == "unknown_parameter":
        with pytest.raises(TypeError):  # only the named members exist as keywords
            rk.validate_export_list_query(**kwargs)
        return
    if "error" in c:
        with pytest.raises(rk.RequestBuildError) as info:
            rk.validate_export_list_query(**kwargs)
        assert info.value.code == c["error"]
    else:
        assert rk.validate_export_list_query(**kwargs) == c["expected"]


def test_scopes_human_routes_step_up():
    for c in V["scopes"]:
        assert rk.missing_scopes(c["granted"], c["operation_id"]) == c["expected"]
    for c in V["human_routes"]:
        o = rk.operation(c["operation_id"])
        assert (o.csrf, o.idempotency, o.step_up) == (c["csrf"], c["idempotency"], c["step_up"])
    for c in V["step_up"]:
        run = lambda: rk.step_up_satisfies(c["requirement"], c["kind"], c["at"], now=c["now"], max_age_seconds=c["max_age_seconds"])  # noqa: E731
        if "error" in c:
            with pytest.raises(rk.InvalidArgumentError):
                run()
        else:
            assert run() is c["expected"]
    assert rk.validate_export_list_query(limit=20) == "limit=20"
