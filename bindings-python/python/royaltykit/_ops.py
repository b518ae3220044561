"""A store operation written once for the blocking and the asyncio stores.

Each operation of a store (a claim, a commit, an inbox's enqueue, …) is one generator that yields
the I/O it needs, as action objects (:class:`Command` for Redis; the SQL stores' actions are in
:mod:`royaltykit.stores`), and returns its result. A blocking store performs each action in the
calling thread (:func:`perform`), an asyncio store awaits it (:func:`aperform`): the sequence, and
what each reply means (the core's protocol objects), is written once, and the two drivers only
send commands and keep connections."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

T = TypeVar("T")
Ops = Generator[Any, Any, T]


@dataclass(frozen=True)
class Command:
    """One of the core's Redis commands: performed, its reply as text."""

    command: list[str]


def perform(ops: Ops[T], do: Callable[[Any], Any]) -> T:
    """Runs the operation ``ops`` in this thread: each action it yields done by ``do``, its result
    sent back (or its exception thrown in, so the operation's ``finally`` runs before it is
    raised); the operation's result."""
    value: Any = None
    failed: list[BaseException] = []  # the failure to throw in next (emptied as it is thrown)
    while True:
        try:
            action = _throw(ops, failed) if failed else ops.send(value)
        except StopIteration as done:
            return cast(T, done.value)
        try:
            value = do(action)
        except BaseException as e:
            failed.append(e)


async def aperform(ops: Ops[T], do: Callable[[Any], Awaitable[Any]]) -> T:
    """:func:`perform` with each action awaited (a cancellation is thrown in likewise)."""
    value: Any = None
    failed: list[BaseException] = []  # the failure to throw in next (emptied as it is thrown)
    while True:
        try:
            action = _throw(ops, failed) if failed else ops.send(value)
        except StopIteration as done:
            return cast(T, done.value)
        try:
            value = await do(action)
        except BaseException as e:
            failed.append(e)


def _throw(ops: Ops[Any], failed: list[BaseException]) -> Any:
    """The failure in ``failed`` thrown into ``ops`` (and taken out of the list): its next
    action. No local of the driver's loop still holds the failure once it propagates, so the
    failure's traceback, which holds the loop's frame, makes no cycle that only the garbage
    collector would free."""
    return ops.throw(failed.pop())
