"""``tf-gulp info``: summarize a gulp directory."""

from __future__ import annotations

import argparse
import json
from typing import Any, Optional

from tf_gulp.cli._common import (CommandError, HelpFormatter, UsageError, add_progress_flags, echo,
                                 progress_wanted)

DESCRIPTION = """\
Summarize a gulp directory: chunks, items, frames, bytes, frames per item, a histogram of frame
sizes (from the JPEG headers of each item's first frame, or of every frame with --all-frames),
JPEG kinds (colour space and chroma subsampling), label counts with their label2idx.json index,
and how tf-gulp ingest wrote it. Reads the indexes and the JPEG headers, each distinct frame once
and one at a time; a progress bar shows on a terminal when it takes more than a second.
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("info", help="items, frames, bytes, chunks, frame sizes, labels",
                              description=DESCRIPTION, formatter_class=HelpFormatter)
    p.add_argument("directory", metavar="DIR", help="the gulp directory")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--all-frames", action="store_true",
                   help="read the header of every frame for the size histogram (slower)")
    p.add_argument("--all-labels", action="store_true", help="list every label, not the top 20")
    p.add_argument("--label-field", default="label", metavar="FIELD",
                   help="meta field holding the labels (default: label)")
    add_progress_flags(p)
    p.set_defaults(func=run)


def _other_format(path: str) -> Optional[str]:
    """What `path` is and what reads it when it is not a gulp directory but something the format
    sniffer (cc/io/format_sniffer.h, the one every reader asks) recognizes, else None."""
    from tf_gulp._format_sniffer import wrong_reader_message

    message = wrong_reader_message(path, "a gulp directory", "a gulp directory")
    if message is not None and " is a Benzina " in message:
        message += f" (tf-gulp bzna info {path} describes it)"
    return message


def run(args: argparse.Namespace) -> int:
    from tf_gulp.gulp.chunk import GulpDataError
    from tf_gulp.gulp.info import directory_info, format_info
    other = _other_format(args.directory)
    if other is not None:
        raise UsageError(other)
    try:
        info = directory_info(args.directory, all_frames=args.all_frames,
                              label_field=args.label_field,
                              progress=progress_wanted(args.progress))
    except (FileNotFoundError, NotADirectoryError) as e:
        raise UsageError(f"{args.directory}: not a gulp directory ({e})") from None
    except (GulpDataError, ValueError, OSError) as e:
        raise CommandError(f"cannot read {args.directory}: {e} (tf-gulp check {args.directory} "
                           "lists every problem)") from None
    if args.json:
        echo(json.dumps(info, indent=1))
    else:
        echo(format_info(info, max_rows=10**9 if args.all_labels else 20))
    return 0
