"""tf.data service servers that can run tf_gulp datasets: ``python -m tf_gulp.service``.

A tf.data service dispatcher (for dynamic sharding, it builds the dataset to make its splits) and
every worker (it runs the dataset's graph) must have tf_gulp's ops registered before the first
dataset arrives, or the job fails with "Op type not registered 'TfGulp>GulpDataset'". Start the servers with
this module, which loads the op library first::

    python -m tf_gulp.service dispatcher --port 5050
    python -m tf_gulp.service worker --dispatcher localhost:5050 --port 5051
    python -m tf_gulp.service worker --dispatcher localhost:5050 --port 5052

or, in a script of your own, call :func:`tf_gulp.ops.library.load_ops` (or the helpers here) before
creating ``tf.data.experimental.service.DispatchServer`` / ``WorkerServer``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Optional, Sequence

import tensorflow as tf

from tf_gulp._args import cli_int, integer
from tf_gulp.ops.library import load_ops

_PORTS = (0, 65535)

__all__ = ["start_dispatcher", "start_worker", "main"]


def start_dispatcher(port: int = 0, *, work_dir: Optional[str] = None,
                     fault_tolerant_mode: bool = False) -> tf.data.experimental.service.DispatchServer:
    """Loads tf_gulp's ops and starts a tf.data service dispatcher on `port` (0: any free port)."""
    port = integer(port, "port", minimum=_PORTS[0], maximum=_PORTS[1], what="start_dispatcher: ")
    load_ops()
    config = tf.data.experimental.service.DispatcherConfig(
        port=port, work_dir=work_dir, fault_tolerant_mode=fault_tolerant_mode)
    return tf.data.experimental.service.DispatchServer(config)


def start_worker(dispatcher_address: str, port: int = 0, *,
                 worker_address: Optional[str] = None) -> tf.data.experimental.service.WorkerServer:
    """Loads tf_gulp's ops and starts a tf.data service worker of the dispatcher at
    `dispatcher_address` (``host:port``) on `port` (0: any free port)."""
    port = integer(port, "port", minimum=_PORTS[0], maximum=_PORTS[1], what="start_worker: ")
    load_ops()
    config = tf.data.experimental.service.WorkerConfig(
        dispatcher_address=dispatcher_address, worker_address=worker_address, port=port)
    return tf.data.experimental.service.WorkerServer(config)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tf_gulp.service",
        description="Run a tf.data service dispatcher or worker that can run tf_gulp datasets.")
    sub = parser.add_subparsers(dest="role", required=True)
    d = sub.add_parser("dispatcher", help="a dispatcher")
    d.add_argument("--port", type=cli_int(*_PORTS), default=5050, help="port to listen on (0: any free one)")
    d.add_argument("--work-dir", help="where the dispatcher keeps its journal (fault tolerance)")
    w = sub.add_parser("worker", help="a worker")
    w.add_argument("--dispatcher", required=True, help="the dispatcher's host:port")
    w.add_argument("--port", type=cli_int(*_PORTS), default=0, help="port to listen on (0: any free one)")
    w.add_argument("--worker-address", help="host:%%port the dispatcher and clients reach this "
                   "worker at (default localhost:%%port)")
    args = parser.parse_args(argv)
    if args.role == "dispatcher":
        server = start_dispatcher(args.port, work_dir=args.work_dir,
                                  fault_tolerant_mode=args.work_dir is not None)
        print(f"tf_gulp.service: dispatcher at {server.target}", flush=True)
    else:
        server = start_worker(args.dispatcher, args.port, worker_address=args.worker_address)
        print(f"tf_gulp.service: worker of {args.dispatcher} on port {server._address}",  # noqa
              flush=True)
    # Serve until SIGTERM / SIGINT.
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
