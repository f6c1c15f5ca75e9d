"""``tf-gulp check``: verify a gulp directory (gulpio2's sanity checks and more)."""

from __future__ import annotations

import argparse
from typing import Any

from tf_gulp._format import human_bytes
from tf_gulp.cli._common import (HelpFormatter, UsageError, add_progress_flags, echo, positive_int,
                                 progress_wanted, usable_cpus)

DESCRIPTION = """\
Check a gulp directory: every index parses, every frame lies inside its data file and the data
file holds nothing else, no empty files, no id twice (gulpio2's sanity checks), chunks in pairs,
label2idx.json, the record of the ingest that wrote it; with --decode, every frame is read and
decoded by libjpeg-turbo (warnings count as errors: a truncated JPEG fails).

Prints one line per problem, naming the file, id, frame and byte offset, then a summary. Time is
proportional to the bytes read (the indexes; with --decode the data, each distinct frame once);
a progress bar shows on a terminal when a check takes more than a second.
Exit status: 0 when there is no error (warnings are allowed unless --strict), 1 otherwise,
2 when DIR is not a directory.
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("check", help="verify a gulp directory (add --decode to decode "
                              "every frame)", description=DESCRIPTION,
                              formatter_class=HelpFormatter)
    p.add_argument("directory", metavar="DIR", help="the gulp directory")
    p.add_argument("--decode", action="store_true", help="also read and decode every frame")
    p.add_argument("--num-workers", type=positive_int, default=None, metavar="N",
                   help="processes decoding chunks in parallel with --decode (default: the usable CPUs "
                        "with --decode, else 1)")
    p.add_argument("--strict", action="store_true", help="warnings fail the check too")
    p.add_argument("--label-field", default="label", metavar="FIELD",
                   help="meta field holding the labels checked against label2idx.json "
                        "(default: label)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only errors (and warnings with --strict) and the summary")
    add_progress_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tf_gulp.gulp.check import check_directory
    workers = args.num_workers or (usable_cpus() if args.decode else 1)
    try:
        report = check_directory(args.directory, decode=args.decode, num_workers=workers,
                                 label_field=args.label_field,
                                 progress=progress_wanted(args.progress))
    except (FileNotFoundError, NotADirectoryError) as e:
        raise UsageError(str(e)) from None
    for problem in report.problems:
        if args.quiet and problem.severity == "warning" and not args.strict:
            continue
        echo(str(problem))
    for note in report.notes:
        if not args.quiet:
            echo(f"note: {note}")
    failed = bool(report.errors) or (args.strict and bool(report.warnings))
    counts = []
    if report.errors:
        counts.append(f"{len(report.errors)} error{'s' if len(report.errors) > 1 else ''}")
    if report.warnings:
        counts.append(f"{len(report.warnings)} warning{'s' if len(report.warnings) > 1 else ''}")
    what = (f"{report.chunks} chunks, {report.ids:,} ids, {report.frames:,} frames, "
            f"{human_bytes(report.bytes)}" + (", every frame decoded" if report.decoded else ""))
    verdict = "FAILED" if failed else "OK"
    echo(f"{args.directory}: {what}: {verdict}" + (f" ({', '.join(counts)})" if counts else ""))
    return 1 if failed else 0
