"""Combine the suites a GPU-machine check ran: python3 bench/combine_suites.py WORK OUT.json

WORK holds walls.tsv (name, start, end per suite) and NAME.json (each suite's `--json`); OUT gets
{name: {"wall_s": seconds, "json": the suite's document or null when it was cut short}}.
"""

import json
import pathlib
import sys


def main() -> None:
    work, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    suites = {}
    for line in (work / "walls.tsv").read_text().splitlines():
        name, begin, end = line.split("\t")
        path = work / f"{name}.json"
        document = json.loads(path.read_text()) if path.exists() else None
        suites[name] = {"wall_s": float(end) - float(begin), "json": document}
    out.write_text(json.dumps(suites, indent=1))


if __name__ == "__main__":
    main()
