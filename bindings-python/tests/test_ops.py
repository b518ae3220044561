"""The store operations' drivers (``royaltykit._ops``): each operation of a store is one generator
of the I/O it needs, performed in this thread (``perform``) or awaited (``aperform``), with a
driver's failure or a cancellation thrown into the operation. The blocking and asyncio Redis
dedup stores run the same operations: the same commands, the same token bookkeeping."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Generator
from typing import Any

import pytest

import royaltykit as rk
from royaltykit._ops import Command, aperform, perform


def two_reads(log: list[str]) -> Generator[Any, Any, str]:
    try:
        a = yield Command(["GET", "a"])
        b = yield Command(["GET", "b"])
        return f"{a}+{b}"
    finally:
        log.append("finally")


def test_each_action_is_done_in_order_and_its_reply_sent_back() -> None:
    log: list[str] = []
    seen: list[list[str]] = []

    def do(action: Command) -> str:
        seen.append(action.command)
        return action.command[1].upper()

    assert perform(two_reads(log), do) == "A+B"
    assert seen == [["GET", "a"], ["GET", "b"]] and log == ["finally"]


def test_a_failed_action_is_thrown_into_the_operation_then_raised() -> None:
    log: list[str] = []

    def do(action: Command) -> str:
        if action.command[1] == "b":
            raise ConnectionError("redis down")
        return "x"

    with pytest.raises(ConnectionError, match="redis down"):
        perform(two_reads(log), do)
    assert log == ["finally"], "the operation's finally ran before the failure was raised"


def test_a_failure_raised_through_the_driver_is_freed_without_the_garbage_collector() -> None:
    class Down(Exception):
        pass

    def down(action: Command) -> str:
        raise Down("redis down")

    gc.disable()  # a cycle through the driver's frame would keep the failure alive
    try:
        ref = None
        try:
            perform(two_reads([]), down)
        except Down as e:
            ref = weakref.ref(e)
        assert ref is not None and ref() is None, "the failure outlived its handling: held by a cycle"
    finally:
        gc.enable()


def test_an_operation_may_answer_a_failed_action_itself() -> None:
    def tolerant() -> Generator[Any, Any, str]:
        try:
            yield Command(["PING"])
        except ConnectionError:
            return "unreachable"
        return "reachable"

    def down(action: Command) -> str:
        raise ConnectionError("no route")

    assert perform(tolerant(), down) == "unreachable"
    assert perform(tolerant(), lambda action: "PONG") == "reachable"


def test_awaited_the_same_and_a_cancellation_reaches_the_operation() -> None:
    async def main() -> None:
        async def reply(action: Command) -> str:
            return action.command[1]

        assert await aperform(two_reads([]), reply) == "a+b"
        log: list[str] = []
        blocked = asyncio.Event()

        async def hangs_on_b(action: Command) -> str:
            if action.command[1] == "b":
                blocked.set()
                await asyncio.sleep(30)
            return "x"

        task = asyncio.ensure_future(aperform(two_reads(log), hangs_on_b))
        await blocked.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert log == ["finally"]

    asyncio.run(main())


class ScriptedRedis:
    """Answers a claim's ``SET … NX`` with OK and every script with 1; ``fail_next`` makes the
    next script raise, as an unreachable Redis does."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, ...]] = []
        self.fail_next = False

    def answer(self, args: tuple[str, ...]) -> Any:
        self.sent.append(args)
        if args[0].upper() == "SET":
            return b"OK"
        if self.fail_next:
            self.fail_next = False
            raise ConnectionError("redis down")
        return 1

    def execute_command(self, *args: str) -> Any:
        return self.answer(args)


class AsyncScriptedRedis(ScriptedRedis):
    async def execute_command(self, *args: str) -> Any:  # type: ignore[override]
        return self.answer(args)


def test_a_commit_redis_did_not_answer_keeps_its_token_for_the_retry_blocking_and_awaited() -> None:
    def blocking() -> tuple[list[tuple[str, ...]], list[Any]]:
        redis = ScriptedRedis()
        store = rk.RedisDedupStore(redis, prefix="ops")
        outcomes: list[Any] = [store.claim("k"), store._tokens._held["k"]]
        redis.fail_next = True
        with pytest.raises(ConnectionError):
            store.commit("k")
        outcomes += [dict(store._tokens._held) != {}, store.commit("k"), store._tokens._held]
        return redis.sent, outcomes

    async def awaited() -> tuple[list[tuple[str, ...]], list[Any]]:
        redis = AsyncScriptedRedis()
        store = rk.AsyncRedisDedupStore(redis, prefix="ops")
        outcomes: list[Any] = [await store.claim("k"), store._tokens._held["k"]]
        redis.fail_next = True
        with pytest.raises(ConnectionError):
            await store.commit("k")
        outcomes += [dict(store._tokens._held) != {}, await store.commit("k"), store._tokens._held]
        return redis.sent, outcomes

    for sent, (state, token, kept, committed, left) in (blocking(), asyncio.run(awaited())):
        assert (state, kept, committed, left) == ("new", True, True, {}), \
            "the token outlived the failed commit and went with the committed one"
        claim, failed, retried = sent
        assert claim[0].upper() == "SET" and any(token in a for a in claim)
        assert any(token in a for a in failed) and failed == retried, "the retry commits the same claim, with its token"
    (blocking_sent, _), (async_sent, _) = blocking(), asyncio.run(awaited())
    # the same commands from both stores, but for each claim's own random token
    assert [c[0] for c in async_sent] == [c[0] for c in blocking_sent]
    assert [len(c) for c in async_sent] == [len(c) for c in blocking_sent]
