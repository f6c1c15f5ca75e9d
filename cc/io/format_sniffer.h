// What a path holds, judged from its first bytes (or, for a folder, from the
// names in it), so that every reader opened on the wrong thing says what the
// thing is and what reads it, instead of a parse error of another format's
// bytes ("a record count of 7885648369244796006"). The one place that knows
// each format's signature: the readers (gulp, FFRecord, Benzina), the Python
// API and `tf-gulp info` all ask here. Parsing stays in each format's module
// (cc/gulp, cc/ffrecord, cc/mp4); this only tells formats apart.
//
// Signatures: gulp: a folder with data_N.gulp / meta_N.gmeta; FFRecord: no
// magic, but its header's first offset is exactly 12 + 12 n for its count n;
// Benzina: an MP4 whose ftyp lists the "bzna" brand; TFRecord: the masked
// CRC-32C of the first record's length; ArrayRecord: Riegeli's file
// signature; pictures and videos: their codecs' magic bytes (a folder: by
// its files' extensions, one level of class folders deep).
#ifndef TF_GULP_CC_IO_FORMAT_SNIFFER_H_
#define TF_GULP_CC_IO_FORMAT_SNIFFER_H_

#include <string>

#include "cc/util/status.h"

namespace tfg {

enum class DataFormat {
  kMissing,
  kGulpDirectory,
  kFFRecordFile,
  kFFRecordDirectory,
  kBenzina,
  kTFRecord,
  kArrayRecord,
  kVideoFile,
  kImageFile,
  kVideoFolder,
  kImageFolder,
  kEmptyFolder,
  kOtherFolder,
  kOtherFile,
};

// The readers that may be opened on a path.
enum class DataReader { kGulp, kFFRecord, kBenzina };

// What `path` (local or any file system cc/io reads) holds. Unreadable paths
// are kOtherFile / kOtherFolder: the reader's own error then says why.
DataFormat SniffPath(const std::string& path);

// "an FFRecord file", "a folder of videos", ...
const char* DataFormatName(DataFormat format);

// What reads it: "read it with tf_gulp.FFRecordDataset", "make a gulp
// directory with `tf-gulp ingest video-folder`", ... Empty for kMissing and
// the unknown kinds.
const char* DataFormatAdvice(DataFormat format);

// OK when `path` may be what `reader` reads (its format, or a kind the sniffer
// cannot judge: the reader's own checks then apply); else InvalidArgument
// "<path> is <format name>, not <what reader reads>: <advice>".
Status CheckReaderFits(const std::string& path, DataReader reader);

// For a reader that failed to open `path` with `failure`: `failure`'s code
// with the sniffer's message when `path` is another format (what it is and
// what reads it), else `failure`. Readers call it on their error paths only, so a good file costs
// no sniffing.
Status ExplainOpenFailure(const Status& failure, const std::string& path, DataReader reader);

}  // namespace tfg

#endif  // TF_GULP_CC_IO_FORMAT_SNIFFER_H_
