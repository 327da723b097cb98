"""Event monitoring, as in `jax.monitoring`: named events with listeners.

Libraries report what happened (`record_event`), how long something took
(`record_event_duration_secs`, `record_event_time_span`) or a measured value
(`record_scalar`); every listener registered for that kind of record is called
synchronously, in registration order, with the event name, the value(s) and the
keyword metadata. Listeners are how a program collects compile counts or timings
without patching the library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = [
    "clear_event_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "unregister_scalar_listener",
]

EventListenerWithMetadata = Callable[..., None]
EventDurationListenerWithMetadata = Callable[..., None]
EventTimeSpanListenerWithMetadata = Callable[..., None]
ScalarListenerWithMetadata = Callable[..., None]

_event_listeners: list[Callable[..., Any]] = []
_event_duration_secs_listeners: list[Callable[..., Any]] = []
_event_time_span_listeners: list[Callable[..., Any]] = []
_scalar_listeners: list[Callable[..., Any]] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Record that `event` happened: calls `listener(event, **kwargs)`."""
    for callback in list(_event_listeners):
        callback(event, **kwargs)


def record_event_duration_secs(
    event: str, duration: float, **kwargs: str | int
) -> None:
    """Record that `event` took `duration` seconds: calls
    `listener(event, duration, **kwargs)`."""
    for callback in list(_event_duration_secs_listeners):
        callback(event, duration, **kwargs)


def record_event_time_span(
    event: str, start_time: float, end_time: float, **kwargs: str | int
) -> None:
    """Record that `event` ran from `start_time` to `end_time` (seconds): calls
    `listener(event, start_time, end_time, **kwargs)`."""
    for callback in list(_event_time_span_listeners):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Record a measured `value` for `event`: calls `listener(event, value,
    **kwargs)`."""
    for callback in list(_scalar_listeners):
        callback(event, value, **kwargs)


def register_event_listener(callback: EventListenerWithMetadata) -> None:
    """Call `callback(event, **kwargs)` on every `record_event`."""
    _event_listeners.append(callback)


def register_event_duration_secs_listener(
    callback: EventDurationListenerWithMetadata,
) -> None:
    """Call `callback(event, duration, **kwargs)` on every
    `record_event_duration_secs`."""
    _event_duration_secs_listeners.append(callback)


def register_event_time_span_listener(
    callback: EventTimeSpanListenerWithMetadata,
) -> None:
    """Call `callback(event, start_time, end_time, **kwargs)` on every
    `record_event_time_span`."""
    _event_time_span_listeners.append(callback)


def register_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Call `callback(event, value, **kwargs)` on every `record_scalar`."""
    _scalar_listeners.append(callback)


def _unregister(listeners, callback, kind):
    # JAX asserts here; keep its error class with a message that says what to do.
    if callback not in listeners:
        raise AssertionError(
            f"{callback!r} is not a registered {kind} listener: unregister only "
            f"callbacks passed to register_{kind}_listener (once per registration)."
        )
    listeners.remove(callback)


def unregister_event_listener(callback: EventListenerWithMetadata) -> None:
    _unregister(_event_listeners, callback, "event")


def unregister_event_duration_listener(
    callback: EventDurationListenerWithMetadata,
) -> None:
    _unregister(_event_duration_secs_listeners, callback, "event_duration_secs")


def unregister_event_time_span_listener(
    callback: EventTimeSpanListenerWithMetadata,
) -> None:
    _unregister(_event_time_span_listeners, callback, "event_time_span")


def unregister_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    _unregister(_scalar_listeners, callback, "scalar")


def clear_event_listeners():
    """Remove every registered listener of every kind."""
    _event_listeners.clear()
    _event_duration_secs_listeners.clear()
    _event_time_span_listeners.clear()
    _scalar_listeners.clear()
