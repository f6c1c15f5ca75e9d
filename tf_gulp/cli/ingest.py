"""``tf-gulp ingest``: write a gulp directory from images, videos or a dataset's label files."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional

from tf_gulp._args import cli_int
from tf_gulp._format import human_bytes
from tf_gulp.class_folders import ignored_summary
from tf_gulp.cli._common import (CommandError, HelpFormatter, UsageError, add_progress_flags, echo,
                                 positive_int, progress_wanted, require_local, usable_cpus)

ADAPTERS = ("image-folder", "image-list", "video-folder", "20bn", "kinetics")

DESCRIPTION = """\
Write a gulp directory (data_N.gulp + meta_N.gmeta chunks, label2idx.json) from:

  image-folder  INPUT/<class>/<image>        one item per image; id = <class>/<file>
  image-list    INPUT = text or CSV file     "<path> <label>" lines, or a CSV with path,label
                                             columns; relative paths from --root (default: the
                                             list's folder)
  video-folder  INPUT/<class>/<video>        one item per video, any format PyAV opens
  20bn          INPUT = labels JSON or CSV   Something-Something / Jester; videos <id>.webm or
                                             folders <id>/ of JPEG frames in --data (default:
                                             INPUT's folder)
  kinetics      INPUT = CSV with a header    youtube_id,time_start,time_end[,label,...]; videos
                                             in --data (default: INPUT's folder), named
                                             <youtube_id>_<start:06d>_<end:06d>.<ext> (whole
                                             clip) or <youtube_id>.<ext> (the range is cut out)

or your own adapter: --adapter MODULE:CLASS (a module on the path, or path/to/file.py:CLASS),
built as CLASS(INPUT, **ADAPTER_ARGS) (plus options=FrameOptions and label2idx= when its
constructor takes them), instead of ADAPTER.

Labels: classes are numbered in sorted order, unless --class-file fixes the numbering: give the
training split's gulp directory (or its label2idx.json, or a class list) when you ingest the
validation split, so that both number every class the same way.

Videos are decoded in-process with PyAV and frames encoded as JPEG (quality 90, 4:4:4 unless
told otherwise); JPEG images and frames are stored byte for byte unless resized or --reencode.

Safety: chunks appear only when complete. If an ingest stops (Ctrl-C, kill, crash, a bad file),
run the same command again: it writes only the missing chunks. An OUTPUT that already holds a
dataset is refused unless you pass --append or --overwrite. A file that cannot be decoded stops
the ingest with its name, or is left out with --skip-bad (and listed at the end). A full or
read-only OUTPUT is never a bad file: the ingest stops naming the output; free space (or fix it)
and run the same command again.

examples:
  tf-gulp ingest video-folder ~/ucf101 ~/ucf101_gulp --shorter-side 128 --fps 12
  tf-gulp ingest image-folder ~/imagenet/train ~/imagenet_gulp --videos-per-chunk 1000
  tf-gulp ingest video-folder ~/ucf101/val ~/ucf101_val_gulp --class-file ~/ucf101_gulp
  tf-gulp ingest 20bn ~/ssv2/train.json ~/ssv2_gulp --data ~/ssv2/videos \\
      --class-file ~/ssv2/labels.json --shorter-side 128
  tf-gulp ingest kinetics ~/k400/train.csv ~/k400_gulp --data ~/k400/train --skip-bad
  tf-gulp ingest --adapter my_adapters.py:MyAdapter ~/raw ~/raw_gulp --adapter-arg split=train
"""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "ingest", help="write a gulp directory from images, videos or dataset label files",
        description=DESCRIPTION, formatter_class=HelpFormatter,
        usage="tf-gulp ingest ADAPTER INPUT OUTPUT [options]\n"
              "       tf-gulp ingest --adapter MODULE:CLASS INPUT OUTPUT [options]")
    p.add_argument("positionals", nargs="+", metavar="ADAPTER INPUT OUTPUT",
                   help=f"ADAPTER is one of {', '.join(ADAPTERS)} (left out with --adapter)")
    g = p.add_argument_group("chunks and workers")
    g.add_argument("--videos-per-chunk", type=positive_int, default=100, metavar="N",
                   help="items per chunk (default 100)")
    g.add_argument("--num-workers", type=positive_int, default=None, metavar="N",
                   help=f"worker processes (default: the usable CPUs, {usable_cpus()} here)")
    g.add_argument("--decode-threads", type=cli_int(0), default=None, metavar="N",
                   help="FFmpeg decoding threads per worker (default: CPUs / workers)")
    mode = g.add_mutually_exclusive_group()
    mode.add_argument("--append", action="store_true",
                      help="add these items as new chunks after those already in OUTPUT")
    mode.add_argument("--overwrite", action="store_true",
                      help="delete the dataset in OUTPUT (chunks, label2idx.json) first")
    g.add_argument("--skip-bad", action="store_true",
                   help="leave out items whose file is missing or cannot be decoded (listed at "
                        "the end) instead of stopping")
    add_progress_flags(g)

    f = p.add_argument_group("frames")
    f.add_argument("--fps", metavar="RATE",
                   help="resample videos to RATE frames/s (25, 29.97, 30000/1001); default: "
                        "keep every frame")
    f.add_argument("--shorter-side", type=positive_int, metavar="PIXELS",
                   help="resize so the shorter side is PIXELS (the longer side is rounded to the "
                        "nearest pixel, ties up); default: keep the size")
    f.add_argument("--max-frames", type=positive_int, metavar="N",
                   help="keep at most the first N frames of each video (after --fps)")
    f.add_argument("--jpeg-quality", type=cli_int(1, 100), default=90, metavar="Q",
                   help="JPEG quality 1-100 for encoded frames (default 90)")
    f.add_argument("--jpeg-subsampling", default="444",
                   choices=("444", "422", "420", "440", "411"),
                   help="chroma subsampling of encoded colour frames (default 444)")
    f.add_argument("--reencode", action="store_true",
                   help="re-encode JPEG inputs too (default: store them byte for byte unless "
                        "resized)")
    f.add_argument("--interpolation", default="bilinear",
                   choices=("bilinear", "area", "bicubic", "lanczos"),
                   help="resize filter (default bilinear)")

    a = p.add_argument_group("adapter inputs")
    a.add_argument("--extensions", metavar="EXT,...",
                   help="image-folder / video-folder: file extensions to take ('*' for every "
                        "file); default: the image formats / every video format PyAV knows")
    a.add_argument("--root", metavar="DIR",
                   help="image-list: folder relative paths start from (default: the list's)")
    a.add_argument("--data", metavar="DIR",
                   help="20bn / kinetics: folder of the videos or frame folders (default: "
                        "INPUT's folder)")
    a.add_argument("--class-file", metavar="FILE|DIR",
                   help="fixes the classes' numbering: a gulp directory (e.g. the training "
                        "split's: its label2idx.json), a label2idx.json, or a class list "
                        "(20bn's labels.json / labels.csv, one class per line); a class it "
                        "lacks is an error")
    a.add_argument("--adapter", dest="adapter_spec", metavar="MODULE:CLASS",
                   help="use your own AbstractDatasetAdapter subclass (or factory)")
    a.add_argument("--adapter-arg", action="append", default=[], metavar="KEY=VALUE",
                   help="keyword argument for --adapter (VALUE parsed as JSON when it is JSON, "
                        "else a string); repeatable")
    p.set_defaults(func=run, interrupt_hint=": complete chunks are kept; run the same command "
                   "again to resume")


# --------------------------------------------------------------------------------------------------


def _frame_options(args: argparse.Namespace, workers: int) -> Any:
    from tf_gulp.gulp.video import FrameOptions, parse_rate
    fps = None
    if args.fps is not None:
        try:
            fps = parse_rate(args.fps)
        except ValueError as e:
            raise UsageError(f"--fps: {e}") from None
    threads = args.decode_threads
    if threads is None:
        threads = max(1, usable_cpus() // max(1, workers))
    try:
        return FrameOptions(fps=fps, shorter_side=args.shorter_side, max_frames=args.max_frames,
                            jpeg_quality=args.jpeg_quality,
                            jpeg_subsampling=args.jpeg_subsampling, reencode_jpeg=args.reencode,
                            interpolation=args.interpolation, decode_threads=threads)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _existing_label2idx(output: str) -> Optional[Dict[str, int]]:
    from tf_gulp.gulp.index import load_label_map  # pylint: disable=import-outside-toplevel

    path = os.path.join(output, "label2idx.json")
    if not os.path.isfile(path):
        return None
    try:  # the core's reading, GulpDataset's (tf_gulp.gulp.index.load_label_map)
        return load_label_map(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: unreadable ({e}); fix or delete it, or use --overwrite") \
            from None


def _check_options_apply(args: argparse.Namespace, adapter: Optional[str]) -> None:
    owners = {"extensions": ("image-folder", "video-folder"), "root": ("image-list",),
              "data": ("20bn", "kinetics")}
    for option, allowed in owners.items():
        if getattr(args, option) is not None and adapter not in allowed:
            flag = "--" + option.replace("_", "-")
            raise UsageError(f"{flag} is for the {' / '.join(allowed)} adapter"
                             f"{'s' if len(allowed) > 1 else ''}, not "
                             f"{adapter or '--adapter'}")
    if args.adapter_arg and adapter is not None:
        raise UsageError("--adapter-arg goes with --adapter MODULE:CLASS")


def _build_builtin(name: str, input_path: str, args: argparse.Namespace, options: Any,
                   label2idx: Optional[Dict[str, int]]) -> Any:
    from tf_gulp.gulp import adapters as A
    if not os.path.exists(input_path):
        raise UsageError(f"{input_path}: no such file or folder")
    exts = None if args.extensions is None else args.extensions.split(",")
    if name in ("image-folder", "video-folder") and not os.path.isdir(input_path):
        raise UsageError(f"{input_path}: not a folder ({name} takes a folder of class folders)")
    if name in ("image-list", "20bn", "kinetics") and not os.path.isfile(input_path):
        raise UsageError(f"{input_path}: not a file ({name} takes a "
                         f"{'list' if name == 'image-list' else 'labels'} file)")
    data_dir = args.data or os.path.dirname(os.path.abspath(input_path))
    labels = dict(options=options, label2idx=label2idx, class_file=args.class_file)
    if name == "image-folder":
        return A.ImageFolderAdapter(input_path, extensions=exts, **labels)
    if name == "video-folder":
        return A.VideoFolderAdapter(input_path, extensions=exts, **labels)
    if name == "image-list":
        return A.ImageListAdapter(input_path, root=args.root, **labels)
    if name == "20bn":
        return A.TwentyBNAdapter(input_path, data_dir, **labels)
    return A.KineticsAdapter(input_path, data_dir, **labels)


def _parse_adapter_args(pairs: List[str]) -> Dict[str, Any]:
    kwargs: Dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise UsageError(f"--adapter-arg {pair!r}: expected KEY=VALUE")
        try:
            kwargs[key] = json.loads(value)
        except ValueError:
            kwargs[key] = value
    return kwargs


def load_adapter_class(spec: str) -> Callable[..., Any]:
    """The class (or factory) named by ``MODULE:NAME`` or ``path/to/file.py:NAME``."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--adapter {spec!r}: expected MODULE:CLASS or path/to/file.py:CLASS")
    if module_name.endswith(".py") or os.sep in module_name:
        path = os.path.abspath(module_name)
        if not os.path.isfile(path):
            raise UsageError(f"--adapter: {module_name}: no such file")
        # Import it as a normal module from its folder, so that worker processes can unpickle
        # the adapter whatever the multiprocessing start method.
        folder, base = os.path.split(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        module_name = os.path.splitext(base)[0]
    elif "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: modules in the current folder
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise UsageError(f"--adapter: cannot import {module_name!r} ({e})") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise UsageError(f"--adapter: module {module_name!r} has no {attr!r}") from None


def _build_custom(spec: str, input_path: str, args: argparse.Namespace, options: Any,
                  label2idx: Optional[Dict[str, int]]) -> Any:
    from tf_gulp.gulp.adapters import AbstractDatasetAdapter
    factory = load_adapter_class(spec)
    kwargs = _parse_adapter_args(args.adapter_arg)
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    if "options" in params and "options" not in kwargs:
        kwargs["options"] = options
    if args.class_file is not None:
        if "class_file" in params and "class_file" not in kwargs:
            kwargs["class_file"] = args.class_file
        elif "label2idx" in params and "label2idx" not in kwargs:
            from tf_gulp.gulp.label_maps import label_map_differences, read_class_list
            fixed = read_class_list(args.class_file)
            differ = label_map_differences(label2idx or {}, fixed)
            if differ:
                raise UsageError(f"--class-file {args.class_file}: numbers {differ[0][0]!r} "
                                 f"{differ[0][2]}, the existing label2idx.json "
                                 f"{differ[0][1]}")
            label2idx = dict(label2idx or {}, **fixed)
        else:
            raise UsageError(f"--class-file: {attr_name(spec)} takes neither class_file= nor "
                             "label2idx=")
    if "label2idx" in params and "label2idx" not in kwargs and label2idx is not None:
        kwargs["label2idx"] = label2idx
    try:
        adapter = factory(input_path, **kwargs)
    except TypeError as e:
        raise UsageError(f"--adapter {spec}: cannot build it as {attr_name(spec)}(INPUT"
                         f"{''.join(', ' + k + '=...' for k in kwargs)}): {e}") from None
    except (FileNotFoundError, ValueError) as e:
        raise UsageError(f"--adapter {spec}: {e}") from None
    needed = ("iter_data", "__len__")
    if not isinstance(adapter, AbstractDatasetAdapter) and not all(
            hasattr(adapter, n) for n in needed):
        raise UsageError(f"--adapter {spec}: built a {type(adapter).__name__}, which has no "
                         "iter_data() and __len__() (subclass tf_gulp.gulp.AbstractDatasetAdapter)")
    return adapter


def attr_name(spec: str) -> str:
    return spec.rpartition(":")[2]


def run(args: argparse.Namespace) -> int:
    from tf_gulp._output_errors import OutputError
    from tf_gulp.gulp.ingest import (GulpIngestor, IngestError, IngestStateError)

    positionals = list(args.positionals)
    if args.adapter_spec:
        if len(positionals) != 2:
            raise UsageError(f"with --adapter, give INPUT OUTPUT (got {len(positionals)} "
                             f"argument{'s' if len(positionals) != 1 else ''})")
        adapter_name = None
        input_path, output = positionals
    else:
        if len(positionals) != 3:
            raise UsageError("expected ADAPTER INPUT OUTPUT, ADAPTER one of "
                             f"{', '.join(ADAPTERS)} (or --adapter MODULE:CLASS INPUT OUTPUT)")
        adapter_name, input_path, output = positionals
        if adapter_name not in ADAPTERS:
            raise UsageError(f"unknown adapter {adapter_name!r}; choose one of "
                             f"{', '.join(ADAPTERS)}, or --adapter MODULE:CLASS")
    _check_options_apply(args, adapter_name)
    if adapter_name in ("video-folder", "20bn", "kinetics"):
        try:
            import av  # noqa: F401
        except ImportError:
            raise UsageError(f"the {adapter_name} adapter decodes videos with PyAV, which is "
                             "not installed: pip install av") from None
    require_local(output, "ingest")
    if os.path.exists(output) and not os.path.isdir(output):
        raise UsageError(f"{output}: exists and is not a folder")
    if os.path.abspath(output) == os.path.abspath(input_path):
        raise UsageError("OUTPUT must not be the INPUT folder")
    workers = args.num_workers or usable_cpus()
    options = _frame_options(args, workers)
    label2idx = None if args.overwrite else (
        _existing_label2idx(output) if os.path.isdir(output) else None)

    try:
        if adapter_name is not None:
            adapter = _build_builtin(adapter_name, input_path, args, options, label2idx)
        else:
            adapter = _build_custom(args.adapter_spec, input_path, args, options, label2idx)
    except (FileNotFoundError, NotADirectoryError, ValueError, UnicodeDecodeError) as e:
        raise UsageError(str(e)) from None
    except ImportError as e:
        raise UsageError(str(e)) from None
    if len(adapter) == 0:
        raise UsageError(f"{input_path}: no items to ingest")
    missing = adapter.missing() if hasattr(adapter, "missing") else []
    if missing and not args.skip_bad:
        first_id, looked_for = missing[0]
        raise UsageError(
            f"{len(missing)} of the {len(adapter)} items have no file (first: id {first_id!r}, "
            f"looked for {looked_for}); check --data, or pass --skip-bad to ingest the others")

    description: Dict[str, Any] = {"adapter": adapter_name or args.adapter_spec,
                                   "input": os.path.abspath(input_path)}
    describe = getattr(adapter, "describe", None)
    if describe is not None:
        description.update(describe())
    if adapter_name is None:
        description["adapter_args"] = _parse_adapter_args(args.adapter_arg)
        description["options"] = options.describe()
    if_exists = "append" if args.append else ("overwrite" if args.overwrite else "error")
    ingestor = GulpIngestor(adapter, output, args.videos_per_chunk, workers, if_exists=if_exists,
                            jpeg_quality=args.jpeg_quality,
                            jpeg_subsampling=args.jpeg_subsampling,
                            progress=progress_wanted(args.progress), resumable=True,
                            skip_bad=args.skip_bad, write_label2idx=True,
                            description=description,
                            # The command keeps its safe defaults where the Python API follows
                            # gulpio2: an existing dataset is refused unless --append (if_exists
                            # above), an item without frames is an error unless --skip-bad.
                            skip_empty=False)
    try:
        summary = ingestor()
    except OutputError as e:  # the output's fault (full disk, read-only...), not an input's
        e.hint = "complete chunks are kept: run the same command again to resume"
        raise CommandError(str(e)) from None
    except FileExistsError:
        raise UsageError(f"{output} already holds a gulp dataset; pass --append to add these "
                         "items after it, or --overwrite to replace it") from None
    except IngestStateError as e:
        raise UsageError(str(e).replace("overwrite to", "--overwrite to")
                         .replace("use overwrite", "use --overwrite")
                         .replace("use append", "use --append")) from None
    except IngestError as e:
        raise CommandError(f"{e}; complete chunks are kept: fix or remove the file and run the "
                           "same command again to resume, or add --skip-bad to leave bad files "
                           "out") from None
    except (OSError, RuntimeError) as e:
        raise CommandError(f"{e}") from None
    _print_summary(summary)
    # Last: what the adapter left out of its input, by extension (a custom adapter without
    # ignored_files() reports none).
    ignored = getattr(adapter, "ignored_files", None)
    echo(f"{input_path}: {ignored_summary(ignored() if ignored is not None else {})}")
    return 0


def _print_summary(summary: Any) -> None:
    out = summary.output_folder
    if summary.status == "already complete":
        echo(f"{out}: this ingest is already complete ({summary.chunks_total} chunks); "
             "nothing to do")
    else:
        resumed = ""
        if summary.chunks_resumed:
            resumed = (f" (resumed: {summary.chunks_resumed} of {summary.chunks_total} chunks "
                       "were already complete)")
        echo(f"{out}: wrote {summary.items:,} items, {summary.frames:,} frames "
             f"({human_bytes(summary.bytes)}) in {summary.chunks_written} chunks in "
             f"{summary.seconds:.2f} s, {summary.frames_per_second:,.0f} frames/s{resumed}")
    if summary.skipped:
        echo(f"skipped {len(summary.skipped)} bad input{'s' if len(summary.skipped) > 1 else ''}:")
        for s in summary.skipped:
            where = s.source or f"item {s.index}"
            ident = f" [id {s.id!r}]" if s.id is not None else f" [item {s.index}]"
            echo(f"  {where}: {s.reason}{ident}")
