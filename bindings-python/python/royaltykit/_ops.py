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
    failed = False
    while True:
        try:
            action = ops.throw(value) if failed else ops.send(value)
        except StopIteration as done:
            return cast(T, done.value)
        try:
            value, failed = do(action), False
        except BaseException as e:
            value, failed = e, True


async def aperform(ops: Ops[T], do: Callable[[Any], Awaitable[Any]]) -> T:
    """:func:`perform` with each action awaited (a cancellation is thrown in likewise)."""
    value: Any = None
    failed = False
    while True:
        try:
            action = ops.throw(value) if failed else ops.send(value)
        except StopIteration as done:
            return cast(T, done.value)
        try:
            value, failed = await do(action), False
        except BaseException as e:
            value, failed = e, True
