#!/usr/bin/env python3
"""Start Voila for the classroom app (scripts/app.py runs this file with Voila's own arguments).

One change to the process before Voila starts: a wait on a kernel channel with no timeout
(jupyter_client's ``AsyncZMQSocketChannel.get_msg(timeout=None)``) waits in slices of
``SLICE_S`` and, at the end of each slice, asks the socket itself whether a message is queued.

Why. Voila executes the dashboard's cells with nbclient, which waits for each cell's
``execute_reply`` on the shell channel with no timeout: one ``poll`` on a zmq.asyncio socket.
ZeroMQ signals a socket's readiness on an edge-triggered descriptor, and a wakeup that is
consumed elsewhere (a poll that timed out at the moment the socket became readable, as the
kernel-ready handshake's one-second polls can on a loaded machine) leaves the reply in the queue
with nobody woken for it. The page then waits for ever; the kernel, idle since its reply, is shut
down by the app's culler once it has been idle ``--cull-idle-s``, and the page shows
"Kernel died". The course's browser test saw exactly that: voila.log recorded the cell's IOPub
``idle`` (the kernel had finished in 0.3 s), no reply for 90 s, then the cull and
``DeadKernelError`` (Voila issue voila-dashboards/voila#1446 reports the same on 0.5.5).

The slices do not resend or retry anything: the reply the kernel sent is read from the queue it
sits in. A slice that ends with the socket readable although its poll said otherwise is a lost
wakeup, logged as a warning with the channel, so the log shows each time it happened.
"""
from __future__ import annotations

import logging
import sys

SLICE_S = 1.0  # the longest a queued message can wait unread after a lost wakeup

log = logging.getLogger("course_app")


def install(channel_class=None, slice_s: float = SLICE_S) -> None:
    """Make ``channel_class.get_msg(timeout=None)`` (default: jupyter_client's AsyncZMQSocketChannel)
    wait in slices of ``slice_s`` seconds, reading a message a poll missed. Idempotent."""
    if not slice_s > 0:
        raise ValueError(f"slice_s must be > 0 s (got {slice_s!r})")
    if channel_class is None:
        from jupyter_client.channels import AsyncZMQSocketChannel as channel_class
    original = getattr(channel_class.get_msg, "_course_original", channel_class.get_msg)

    async def get_msg(self, timeout=None):
        if timeout is not None:
            return await original(self, timeout)
        import zmq

        while True:
            if await self.socket.poll(int(slice_s * 1000)):
                return await self._recv()
            if self.socket.get(zmq.EVENTS) & zmq.POLLIN:
                log.warning("lost wakeup on a kernel channel (%s): a queued message read after a %.1f s slice",
                            getattr(self, "channel_name", type(self).__name__), slice_s)
                return await self._recv()

    get_msg._course_original = original
    get_msg.__doc__ = original.__doc__
    channel_class.get_msg = get_msg


def main(argv: list[str] | None = None) -> None:
    install()
    from voila.app import main as voila_main

    sys.argv = ["voila", *(sys.argv[1:] if argv is None else argv)]
    voila_main()


if __name__ == "__main__":
    main()
