"""scripts/app_voila.py: the classroom app's Voila launcher reads a kernel reply whose wakeup was lost.

The fix is a wait in slices that asks the socket itself, at the end of each, whether a message is
queued. Tested on a real ZeroMQ pair with jupyter_client's own channel class (a subclass, so the rest of
this process keeps the original), and on a socket that reports "not ready" to every poll while holding a
message: the lost wakeup itself.
"""
from __future__ import annotations

import asyncio
import importlib.util
import logging
import time
from pathlib import Path

import pytest
import zmq
import zmq.asyncio
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session

REPO = Path(__file__).resolve().parent.parent


def _launcher():
    spec = importlib.util.spec_from_file_location("course_app_voila", REPO / "scripts" / "app_voila.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _patched_channel(slice_s=0.2):
    class Channel(AsyncZMQSocketChannel):
        pass

    _launcher().install(Channel, slice_s=slice_s)
    return Channel


def test_the_app_starts_voila_through_the_launcher():
    spec = importlib.util.spec_from_file_location("course_app", REPO / "scripts" / "app.py")
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    cmd = app.voila_command(REPO / "notebooks" / "floor-dashboard.ipynb", 8866)
    assert Path(cmd[1]) == REPO / "scripts" / "app_voila.py" and Path(cmd[1]).is_file()


def test_install_leaves_the_base_class_alone_and_is_idempotent():
    base = AsyncZMQSocketChannel.get_msg
    Channel = _patched_channel()
    assert AsyncZMQSocketChannel.get_msg is base and Channel.get_msg is not base
    first = Channel.get_msg
    _launcher().install(Channel)
    assert Channel.get_msg._course_original is first._course_original is base
    with pytest.raises(ValueError, match="slice_s"):
        _launcher().install(Channel, slice_s=0)


def test_a_reply_queued_before_or_after_the_wait_is_read_over_a_real_socket():
    async def run():
        ctx = zmq.asyncio.Context()
        a, b = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
        try:
            port = a.bind_to_random_port("tcp://127.0.0.1")
            b.connect(f"tcp://127.0.0.1:{port}")
            session = Session(key=b"k")
            chan = _patched_channel(slice_s=0.2)(b, session)
            session.send(a, "execute_reply", content={"n": 1})  # queued before the wait
            first = await asyncio.wait_for(chan.get_msg(), 5)

            async def later():
                await asyncio.sleep(0.7)  # more than three slices of 0.2 s
                session.send(a, "execute_reply", content={"n": 2})

            t0 = time.monotonic()
            sender = asyncio.ensure_future(later())
            second = await asyncio.wait_for(chan.get_msg(), 5)
            await sender
            return first, second, time.monotonic() - t0
        finally:
            a.close(0)
            b.close(0)
            ctx.term()

    first, second, waited = asyncio.run(run())
    assert (first["content"], second["content"]) == ({"n": 1}, {"n": 2})
    assert waited >= 0.6


class _DeafSocket:
    """A socket holding a message whose every poll says 'nothing' (the lost wakeup), counting the polls."""

    def __init__(self, polls_before_queued=0):
        self.polls, self.queued_after = 0, polls_before_queued

    async def poll(self, timeout_ms):
        self.polls += 1
        await asyncio.sleep(timeout_ms / 1000 / 100)
        return 0

    def get(self, option):
        assert option == zmq.EVENTS
        return zmq.POLLIN if self.polls > self.queued_after else 0


def test_a_lost_wakeup_is_read_at_the_end_of_a_slice_and_logged(caplog):
    Channel = _patched_channel(slice_s=0.5)
    chan = Channel.__new__(Channel)  # no real socket: a deaf one
    chan.socket = _DeafSocket(polls_before_queued=3)

    async def recv():
        return {"msg_type": "execute_reply"}

    chan._recv = recv
    with caplog.at_level(logging.WARNING, logger="course_app"):
        msg = asyncio.run(asyncio.wait_for(chan.get_msg(), 5))
    assert msg == {"msg_type": "execute_reply"}
    assert chan.socket.polls == 4  # three empty slices, then the message on the fourth
    assert [r.getMessage() for r in caplog.records if "lost wakeup" in r.getMessage()]


def test_a_wait_with_a_timeout_is_the_original_wait():
    calls = []

    class Channel:
        async def get_msg(self, timeout=None):
            calls.append(timeout)
            return "original"

    _launcher().install(Channel, slice_s=0.2)
    chan = Channel()
    chan.socket = _DeafSocket()
    assert asyncio.run(chan.get_msg(timeout=3)) == "original" and calls == [3]
