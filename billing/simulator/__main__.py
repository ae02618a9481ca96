"""Run the billing simulator on its own port: `python -m billing.simulator --port 8765`."""

from __future__ import annotations

import argparse
from datetime import date

from billing.simulator.app import BillingSimulator
from billing.simulator.data import DEFAULT_SEED
from billing.simulator.server import make_sim_server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m billing.simulator", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument(
        "--as-of", type=date.fromisoformat, default=None, help="anchor date of the data (default: today)"
    )
    parser.add_argument("--token", default="sim-token")
    parser.add_argument(
        "--fault", default=None, help="global fault: 503, 500, timeout, reset, malformed, schema, latency:200"
    )
    parser.add_argument("--hang-s", type=float, default=30.0, help="how long the timeout fault hangs")
    args = parser.parse_args(argv)
    app = BillingSimulator(
        seed=args.seed, as_of=args.as_of, token=args.token, fault=args.fault, hang_s=args.hang_s
    )
    server = make_sim_server(app, args.host, args.port)
    host, port = server.server_address[:2]
    print(
        f"Billing simulator on http://{host}:{port}/ — {len(app.data.accounts)} customers, "
        f"as of {app.data.as_of}, token {args.token!r}, fault {app.fault or 'none'}",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
