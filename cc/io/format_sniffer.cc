#include "cc/io/format_sniffer.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <vector>

#include "cc/io/file_system.h"
#include "cc/io/random_access_file.h"

namespace tfg {
namespace {

// Riegeli's file signature (ArrayRecord files are Riegeli files): the first
// block header's hash, the same in every file.
constexpr uint8_t kRiegeliSignature[8] = {0x83, 0xAF, 0x70, 0xD1, 0x0D, 0x88, 0x4A, 0x3F};

// Class folders looked into when judging a folder by its files' extensions: a
// few are enough to tell videos from pictures, and a remote folder of
// thousands stays cheap.
constexpr size_t kMaxFoldersLooked = 8;

uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint32_t LoadLe32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

// CRC-32C (Castagnoli), bitwise: only TFRecord's 8-byte length is checked.
uint32_t Crc32c(const uint8_t* data, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint32_t MaskedCrc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u; }

std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string Extension(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? "" : Lower(name.substr(dot + 1));
}

bool IsVideoExtension(const std::string& ext) {
  static const char* const kVideo[] = {"mp4", "avi", "mkv", "webm", "mov", "m4v", "mpg",
                                       "mpeg", "flv", "wmv", "3gp", "ogv", "ts"};
  for (const char* v : kVideo) {
    if (ext == v) return true;
  }
  return false;
}

bool IsImageExtension(const std::string& ext) {
  static const char* const kImage[] = {"jpg", "jpeg", "png", "gif", "bmp", "webp", "tif", "tiff"};
  for (const char* v : kImage) {
    if (ext == v) return true;
  }
  return false;
}

// data_<n>.gulp / meta_<n>.gmeta.
bool IsGulpChunkName(const std::string& name) {
  auto numbered = [&](const char* prefix, const char* suffix) {
    const size_t p = std::strlen(prefix), s = std::strlen(suffix);
    if (name.size() <= p + s || name.compare(0, p, prefix) != 0 ||
        name.compare(name.size() - s, s, suffix) != 0) {
      return false;
    }
    return std::all_of(name.begin() + p, name.end() - s,
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
  };
  return numbered("data_", ".gulp") || numbered("meta_", ".gmeta");
}

DataFormat SniffFolder(const std::string& path) {
  std::vector<std::string> names;
  if (!ListDirectory(path, &names).ok()) return DataFormat::kOtherFolder;
  if (names.empty()) return DataFormat::kEmptyFolder;
  size_t videos = 0, images = 0, folders_looked = 0;
  bool ffr = false;
  for (const std::string& name : names) {
    if (IsGulpChunkName(name)) return DataFormat::kGulpDirectory;
    const std::string ext = Extension(name);
    if (ext == "ffr") ffr = true;
    videos += IsVideoExtension(ext);
    images += IsImageExtension(ext);
  }
  if (ffr) return DataFormat::kFFRecordDirectory;
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (videos + images > 0 || folders_looked >= kMaxFoldersLooked) break;
    const std::string sub = path + "/" + name;
    FileInfo info;
    if (!StatPath(sub, &info).ok() || !info.is_directory) continue;
    ++folders_looked;
    std::vector<std::string> inner;
    if (!ListDirectory(sub, &inner).ok()) continue;
    for (const std::string& n : inner) {
      videos += IsVideoExtension(Extension(n));
      images += IsImageExtension(Extension(n));
    }
  }
  if (videos > 0 && videos >= images) return DataFormat::kVideoFolder;
  if (images > 0) return DataFormat::kImageFolder;
  return DataFormat::kOtherFolder;
}

DataFormat SniffFile(const std::string& path) {
  std::unique_ptr<RandomAccessFile> file;
  if (!RandomAccessFile::Open(path, &file).ok()) return DataFormat::kOtherFile;
  const uint64_t size = file->size();
  uint8_t head[64] = {0};
  const size_t n = static_cast<size_t>(std::min<uint64_t>(size, sizeof(head)));
  if (n == 0 || !file->ReadAt(0, n, head).ok()) return DataFormat::kOtherFile;
  if (n >= 8 && std::memcmp(head, kRiegeliSignature, 8) == 0) return DataFormat::kArrayRecord;
  // FFRecord: [crc u32][count u64][count crc u32][count offset u64], the first
  // offset just past that header.
  if (n >= 12) {
    const uint64_t count = LoadLe64(head + 4);
    if (count == 0 && size == 12) return DataFormat::kFFRecordFile;
    if (count > 0 && count <= (size - 12) / 12) {
      uint8_t first[8];
      if (file->ReadAt(12 + 4 * count, 8, first).ok() && LoadLe64(first) == 12 + 12 * count) {
        return DataFormat::kFFRecordFile;
      }
    }
  }
  // TFRecord: [length u64][masked crc32c of length u32][data][masked crc u32].
  if (n >= 12 && LoadLe32(head + 8) == MaskedCrc(Crc32c(head, 8)) &&
      LoadLe64(head) <= size - 16) {
    return DataFormat::kTFRecord;
  }
  if (n >= 12 && std::memcmp(head + 4, "ftyp", 4) == 0) {
    // The ftyp box: major brand, minor version, compatible brands.
    const uint32_t box = uint32_t{head[0]} << 24 | uint32_t{head[1]} << 16 |
                         uint32_t{head[2]} << 8 | head[3];
    const size_t end = std::min<size_t>(n, box);
    for (size_t p = 8; p + 4 <= end; p += 4) {
      if (p != 12 && std::memcmp(head + p, "bzna", 4) == 0) return DataFormat::kBenzina;
    }
    return DataFormat::kVideoFile;
  }
  if (n >= 4 && std::memcmp(head, "\x1A\x45\xDF\xA3", 4) == 0) return DataFormat::kVideoFile;
  if (n >= 12 && std::memcmp(head, "RIFF", 4) == 0 && std::memcmp(head + 8, "AVI ", 4) == 0) {
    return DataFormat::kVideoFile;
  }
  if (n >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) return DataFormat::kImageFile;
  if (n >= 8 && std::memcmp(head, "\x89PNG\r\n\x1A\n", 8) == 0) return DataFormat::kImageFile;
  if (n >= 4 && std::memcmp(head, "GIF8", 4) == 0) return DataFormat::kImageFile;
  if (n >= 12 && std::memcmp(head, "RIFF", 4) == 0 && std::memcmp(head + 8, "WEBP", 4) == 0) {
    return DataFormat::kImageFile;
  }
  return DataFormat::kOtherFile;
}

// What each reader reads, for "<path> is X, not <this>".
const char* ReaderWants(DataReader reader) {
  switch (reader) {
    case DataReader::kGulp: return "a gulp directory (data_N.gulp + meta_N.gmeta)";
    case DataReader::kFFRecord: return "an FFRecord file or a folder of .ffr files";
    case DataReader::kBenzina: return "a Benzina (.bzna) file";
  }
  return "";
}

bool Fits(DataFormat format, DataReader reader) {
  switch (format) {
    // Nothing to judge: the reader's own error says what is wrong.
    case DataFormat::kMissing:
    case DataFormat::kOtherFile:
    case DataFormat::kOtherFolder:
    case DataFormat::kEmptyFolder:
      return true;
    case DataFormat::kGulpDirectory: return reader == DataReader::kGulp;
    case DataFormat::kFFRecordFile:
    case DataFormat::kFFRecordDirectory: return reader == DataReader::kFFRecord;
    case DataFormat::kBenzina: return reader == DataReader::kBenzina;
    default: return false;
  }
}

}  // namespace

DataFormat SniffPath(const std::string& path) {
  FileInfo info;
  const Status s = StatPath(path, &info);
  if (s.code() == StatusCode::kNotFound) return DataFormat::kMissing;
  if (!s.ok()) return DataFormat::kOtherFile;
  return info.is_directory ? SniffFolder(path) : SniffFile(path);
}

const char* DataFormatName(DataFormat format) {
  switch (format) {
    case DataFormat::kMissing: return "missing";
    case DataFormat::kGulpDirectory: return "a gulp directory";
    case DataFormat::kFFRecordFile: return "an FFRecord file";
    case DataFormat::kFFRecordDirectory: return "a folder of FFRecord files";
    case DataFormat::kBenzina: return "a Benzina (.bzna) dataset";
    case DataFormat::kTFRecord: return "a TFRecord file";
    case DataFormat::kArrayRecord: return "an ArrayRecord (Riegeli) file";
    case DataFormat::kVideoFile: return "a video file";
    case DataFormat::kImageFile: return "an image file";
    case DataFormat::kVideoFolder: return "a folder of videos";
    case DataFormat::kImageFolder: return "a folder of images";
    case DataFormat::kEmptyFolder: return "an empty folder";
    case DataFormat::kOtherFolder: return "a folder";
    case DataFormat::kOtherFile: return "a file";
  }
  return "a file";
}

const char* DataFormatAdvice(DataFormat format) {
  switch (format) {
    case DataFormat::kGulpDirectory: return "read it with tf_gulp.GulpDataset";
    case DataFormat::kFFRecordFile:
    case DataFormat::kFFRecordDirectory: return "read it with tf_gulp.FFRecordDataset";
    case DataFormat::kBenzina: return "read it with tf_gulp.BenzinaDataset";
    case DataFormat::kTFRecord:
      return "read it with tf.data.TFRecordDataset (JPEG bytes in its examples decode fused "
             "with tf_gulp.ops.decode_jpeg_warped)";
    case DataFormat::kArrayRecord:
      return "tf_gulp does not read ArrayRecord: read it with array_record's "
             "ArrayRecordDataSource";
    case DataFormat::kVideoFile:
      return "make a gulp directory of a folder of class folders of videos with "
             "`tf-gulp ingest video-folder`";
    case DataFormat::kImageFile:
      return "decode it with tf.io.decode_image, or pack a folder of images with "
             "`tf-gulp bzna create` or tf_gulp.ffrecord.pack_folder";
    case DataFormat::kVideoFolder:
      return "make a gulp directory with `tf-gulp ingest video-folder`";
    case DataFormat::kImageFolder:
      return "make a gulp directory with `tf-gulp ingest image-folder` (then read it with "
             "tf_gulp.GulpDataset), a Benzina dataset with `tf-gulp bzna create`, or pack it "
             "into FFRecord with tf_gulp.ffrecord.pack_folder";
    default: return "";
  }
}

Status CheckReaderFits(const std::string& path, DataReader reader) {
  const DataFormat format = SniffPath(path);
  if (Fits(format, reader)) return Status::Ok();
  return InvalidArgumentError(path, " is ", DataFormatName(format), ", not ", ReaderWants(reader),
                              ": ", DataFormatAdvice(format));
}

Status ExplainOpenFailure(const Status& failure, const std::string& path, DataReader reader) {
  if (failure.ok()) return failure;
  // The reader's own error code (DataLoss for bytes that did not parse, NotFound for a folder
  // without its files...), the sniffer's message.
  const Status fits = CheckReaderFits(path, reader);
  return fits.ok() ? failure : Status(failure.code(), fits.message());
}

}  // namespace tfg
