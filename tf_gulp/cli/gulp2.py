"""gulpio2's command names (``gulp2_*``), for the scripts and habits of gulpio2 users.

* ``gulp2_20bn_json_videos`` runs the ingest, with gulpio2's arguments and behaviour (new chunks
  are appended to what the output folder holds; items without frames are left out with gulpio2's
  message); ``gulp2_sanity_check`` runs gulpio2's four checks with gulpio2's output.
* The other ``gulp2_*`` commands print the ``tf-gulp ingest`` command that does their job (their
  adapters' ids and folder layouts differ from tf_gulp's, so running them silently would give
  a different dataset) and exit with status 2, writing nothing.

Each runs as ``python -m tf_gulp.cli.gulp2 NAME ARGS...``. They are not console scripts of the
package: installing tf_gulp next to gulpio2 must not replace gulpio2's own ``gulp2_*`` commands.
``python -m tf_gulp.cli.gulp2 --install-scripts [DIR]`` installs them (opt-in) as commands in DIR
(default: the folder of this Python's scripts), skipping every name that already exists there
(gulpio2's) unless ``--force``. See docs/compat.md.
"""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys
import sysconfig
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import tf_gulp

__all__ = ["COMMANDS", "install_scripts", "main"]

_DOC = "docs/compat.md"


def _parser(name: str, positionals: Sequence[str], options: Dict[str, Optional[str]],
            flags: Sequence[str] = ()) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=name, description=f"gulpio2's {name}, on tf_gulp "
                                     f"(see {_DOC}).")
    parser.add_argument("--version", action="version", version=f"tf_gulp {tf_gulp.__version__}")
    for option, default in options.items():
        parser.add_argument(f"--{option}", default=default)
    for flag in flags:
        parser.add_argument(f"--{flag}", action="store_true")
    for positional in positionals:
        parser.add_argument(positional)
    return parser


def _int(parser: argparse.ArgumentParser, option: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        parser.error(f"--{option} must be an integer, got {value!r}")
        raise  # unreachable: parser.error exits


# --------------------------------------------------------------------------------------------------
# Commands that run


def gulp2_20bn_json_videos(argv: Optional[Sequence[str]] = None) -> int:
    """``gulp2_20bn_json_videos INPUT_JSON VIDEOS_DIRECTORY OUTPUT_DIRECTORY`` (+ gulpio2's
    options): the ingest, as gulpio2's script runs it."""
    from tf_gulp.gulp.gulpio2_adapters import Custom20BNJsonVideoAdapter
    from tf_gulp.gulp.ingest import GulpIngestor

    parser = _parser("gulp2_20bn_json_videos", ["input_json", "videos_directory",
                                                "output_directory"],
                     {"videos_per_chunk": "100", "num_workers": "4", "frame_size": "-1",
                      "frame_rate": "8", "shm_dir": "/dev/shm", "label_name": "template"},
                     ["shuffle", "extend", "remove_duplicates"])
    args = parser.parse_args(argv)
    adapter = Custom20BNJsonVideoAdapter(
        args.input_json, args.videos_directory, args.output_directory, shuffle=args.shuffle,
        frame_size=_int(parser, "frame_size", args.frame_size),
        frame_rate=_int(parser, "frame_rate", args.frame_rate), shm_dir_path=args.shm_dir,
        label_name=args.label_name, remove_duplicate_ids=args.remove_duplicates)
    # gulpio2's GulpIngestor: appends after existing chunks (with or without --extend).
    GulpIngestor(adapter, args.output_directory,
                 _int(parser, "videos_per_chunk", args.videos_per_chunk),
                 _int(parser, "num_workers", args.num_workers))()
    return 0


def gulp2_sanity_check(argv: Optional[Sequence[str]] = None) -> int:
    """``gulp2_sanity_check GULP_DIRECTORY``: gulpio2's four checks, printed as gulpio2 does.
    Exits 1 when a check fails (gulpio2 exits 0); ``tf-gulp check`` checks more."""
    from tf_gulp.gulp import sanity_utils
    from tf_gulp.gulp.directory import GulpDirectory
    from tf_gulp.gulp.index import GulpDataError

    args = _parser("gulp2_sanity_check", ["gulp_directory"], {}).parse_args(argv)
    try:
        directory = GulpDirectory(args.gulp_directory, require_chunks=True)
    except (GulpDataError, OSError) as e:
        print(f"gulp2_sanity_check: {e}", file=sys.stderr)
        return 1
    checks = [("Check for empty meta files", sanity_utils.check_meta_file_size_larger_zero),
              ("Check for empty data files", sanity_utils.check_data_file_size_larger_zero),
              ("Check data file size equals size in meta file",
               sanity_utils.check_data_file_size),
              ("Check presence of duplicate ids", sanity_utils.check_for_duplicate_ids)]
    failed = False
    for message, check in checks:
        result = {"message": message, "failures": check(directory)}
        sanity_utils.check_for_failures(result)
        failed = failed or bool(result["failures"])
    return 1 if failed else 0


# --------------------------------------------------------------------------------------------------
# Commands that say which tf-gulp command does their job

#: name -> (positionals, options with defaults, flags, builder of the tf-gulp argv, note)
_Translation = Tuple[List[str], Dict[str, Optional[str]], List[str],
                     Callable[[argparse.Namespace], List[str]], str]


def _sizes(args: argparse.Namespace, chunk_option: str, size_option: str,
           rate_option: Optional[str] = None) -> List[str]:
    out = ["--videos-per-chunk", getattr(args, chunk_option),
           "--num-workers", args.num_workers]
    size = getattr(args, size_option)
    if size is not None and size.lstrip("-").isdigit() and int(size) > 0:
        out += ["--shorter-side", size]
    if rate_option is not None:
        out += ["--fps", getattr(args, rate_option)]
    return out


_VIDEO_OPTIONS = {"videos_per_chunk": "100", "num_workers": "4", "shm_dir": "/dev/shm"}
_IMAGE_OPTIONS = {"images_per_chunk": "100", "num_workers": "4", "image_size": "-1"}

_TRANSLATIONS: Dict[str, _Translation] = {
    "gulp2_video_folder": (
        ["video_directory", "output_directory"], dict(_VIDEO_OPTIONS, frame_size="-1"),
        ["shuffle"],
        lambda a: ["video-folder", a.video_directory, a.output_directory]
        + _sizes(a, "videos_per_chunk", "frame_size"),
        "ids are paths relative to the input folder (gulpio2: the file name) and every frame is "
        "kept (gulpio2 bursts with ffmpeg's default rate)"),
    "gulp2_image_folder": (
        ["images_directory", "output_directory"], dict(_IMAGE_OPTIONS), ["shuffle"],
        lambda a: ["image-folder", a.images_directory, a.output_directory]
        + _sizes(a, "images_per_chunk", "image_size"),
        "ids are <class>/<file> (gulpio2: <class>-<file>); JPEGs are stored as they are unless "
        "resized"),
    "gulp2_image_list": (
        ["image_list_file", "output_directory"], dict(_IMAGE_OPTIONS, root_path=None),
        ["shuffle"],
        lambda a: ["image-list", a.image_list_file, a.output_directory]
        + (["--root", a.root_path] if a.root_path else [])
        + _sizes(a, "images_per_chunk", "image_size"),
        "the list is '<path> <label>' lines or a CSV with path,label columns"),
    "gulp2_kinetics": (
        ["input_json", "videos_directory", "output_directory"],
        dict(_VIDEO_OPTIONS, image_size="-1"), ["shuffle"],
        lambda a: ["kinetics", "<the split's CSV>", a.output_directory, "--data",
                   a.videos_directory] + _sizes(a, "videos_per_chunk", "image_size"),
        "tf-gulp reads Kinetics' CSV files (youtube_id,time_start,time_end,label), not the JSON"),
    "gulp2_20bn_csv_webm": (
        ["input_csv", "videos_directory", "output_directory"],
        dict(_VIDEO_OPTIONS, frame_size="-1", frame_rate="8", label_name="label"),
        ["shuffle", "extend", "remove_duplicates"],
        lambda a: ["20bn", a.input_csv, a.output_directory, "--data", a.videos_directory]
        + _sizes(a, "videos_per_chunk", "frame_size", "frame_rate"),
        "videos are <id>.webm in --data"),
    "gulp2_20bn_csv_jpeg": (
        ["input_csv", "jpeg_directory", "output_directory"],
        dict(_VIDEO_OPTIONS, image_size="-1"), ["shuffle"],
        lambda a: ["20bn", a.input_csv, a.output_directory, "--data", a.jpeg_directory]
        + _sizes(a, "videos_per_chunk", "image_size"),
        "frame folders are <id>/ of JPEG files in --data"),
    "gulp2_activitynet": (
        ["input_json", "videos_directory", "output_directory"],
        dict(_VIDEO_OPTIONS, image_size="-1", phase="training"), ["shuffle"],
        lambda a: ["--adapter", "<your_adapter.py>:<Class>", a.input_json, a.output_directory],
        "tf-gulp has no ActivityNet adapter: write one (AbstractDatasetAdapter, docs/ingest.md)"),
    "gulp2_register_adapter": (
        ["adapter_file", "class_name"], {}, [],
        lambda a: ["--adapter", f"{a.adapter_file}:{a.class_name}", "INPUT", "OUTPUT"],
        "no script needs generating: tf-gulp ingest takes the adapter directly "
        "(--adapter-arg KEY=VALUE for its arguments)"),
}


def _translated(name: str) -> Callable[[Optional[Sequence[str]]], int]:
    positionals, options, flags, build, note = _TRANSLATIONS[name]

    def command(argv: Optional[Sequence[str]] = None) -> int:
        args = _parser(name, positionals, options, flags).parse_args(argv)
        line = shlex.join(["tf-gulp", "ingest"] + build(args))
        print(f"{name} is gulpio2's command. With tf_gulp, this ingest is:\n\n    {line}\n\n"
              f"Note: {note}. Add --append to add to an existing dataset (gulpio2 always "
              f"appended); tf-gulp ingest refuses one otherwise. See {_DOC}.", file=sys.stderr)
        return 2

    command.__name__ = name
    command.__doc__ = f"``{name}``: prints the ``tf-gulp ingest`` command that does its job."
    return command


gulp2_video_folder = _translated("gulp2_video_folder")
gulp2_image_folder = _translated("gulp2_image_folder")
gulp2_image_list = _translated("gulp2_image_list")
gulp2_kinetics = _translated("gulp2_kinetics")
gulp2_20bn_csv_webm = _translated("gulp2_20bn_csv_webm")
gulp2_20bn_csv_jpeg = _translated("gulp2_20bn_csv_jpeg")
gulp2_activitynet = _translated("gulp2_activitynet")
gulp2_register_adapter = _translated("gulp2_register_adapter")

#: Every gulpio2 command name -> its function (argv -> exit status).
COMMANDS: Dict[str, Callable[[Optional[Sequence[str]]], int]] = {
    "gulp2_20bn_json_videos": gulp2_20bn_json_videos,
    "gulp2_sanity_check": gulp2_sanity_check,
    **{name: globals()[name] for name in _TRANSLATIONS},
}


def install_scripts(directory: Optional[str] = None, force: bool = False) -> Tuple[List[str],
                                                                                  List[str]]:
    """Write a ``gulp2_*`` command per entry of :data:`COMMANDS` into ``directory`` (default: the
    folder of this Python's scripts, e.g. the virtual environment's ``bin/``), each running
    ``python -m tf_gulp.cli.gulp2 NAME`` with this Python. A name that exists there already
    (gulpio2's own command) is left alone unless ``force``. Returns (written, kept) names."""
    directory = directory or sysconfig.get_path("scripts")
    os.makedirs(directory, exist_ok=True)
    written, kept = [], []
    for name in sorted(COMMANDS):
        path = os.path.join(directory, name)
        if os.path.lexists(path) and not force:
            kept.append(name)
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"#!/bin/sh\n# tf_gulp's {name} (docs/compat.md); installed by "
                    "python -m tf_gulp.cli.gulp2 --install-scripts\n"
                    f"exec {shlex.quote(sys.executable)} -m tf_gulp.cli.gulp2 {name} \"$@\"\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(name)
    return written, kept


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m tf_gulp.cli.gulp2 NAME ARGS...`` or ``--install-scripts [DIR] [--force]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--install-scripts":
        rest = [a for a in argv[1:] if a != "--force"]
        written, kept = install_scripts(rest[0] if rest else None, force="--force" in argv)
        print(f"installed {len(written)} gulp2_* commands" +
              (f"; kept the existing {', '.join(kept)} (gulpio2's? --force replaces them)"
               if kept else ""))
        return 0
    if not argv or argv[0] not in COMMANDS:
        print(f"usage: python -m tf_gulp.cli.gulp2 {{{','.join(sorted(COMMANDS))}}} ARGS...\n"
              "       python -m tf_gulp.cli.gulp2 --install-scripts [DIR] [--force]",
              file=sys.stderr)
        return 2
    return COMMANDS[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main())
