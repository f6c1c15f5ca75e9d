// tf_gulp._core's gulp functions: the gulp rules of cc/gulp for the Python
// readers (tf_gulp.gulp.GulpDirectory / GulpChunk) and `tf-gulp check/info`,
// so every entry point parses a gulp directory, and judges it, with the same
// code as GulpDataset (cc/gulp/problem.h).
//
// A chunk comes back compact: ids, frames per id and one (frames, 3) int64
// array of [offset, pad, total_length], plus the meta_data lists as one JSON
// text (json.loads once, not once per id); tf_gulp/gulp/index.py turns that
// into gulpio2's dicts.

#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cc/codec/jpeg_decoder.h"
#include "cc/codec/picture.h"
#include "cc/gulp/chunk_index.h"
#include "cc/gulp/element_reader.h"
#include "cc/gulp/gulp_directory.h"
#include "cc/gulp/ingest_record.h"
#include "cc/gulp/problem.h"
#include "cc/io/random_access_file.h"
#include "cc/util/printable_text.h"
#include "tf_gulp/pybind/python_file_system.h"
#include "tf_gulp/pybind/status.h"

namespace py = pybind11;

namespace tf_gulp {
namespace pybind {
namespace {

namespace gulp = ::tfg::gulp;

py::dict ChunkToPython(const gulp::ChunkIndex& chunk, int64_t number) {
  const size_t n_items = chunk.items.size();
  size_t n_frames = 0;
  for (const gulp::Item& item : chunk.items) n_frames += item.frames.size();
  py::list ids;
  py::array_t<int64_t> counts(static_cast<py::ssize_t>(n_items));
  py::array_t<int64_t> frames({static_cast<py::ssize_t>(n_frames), py::ssize_t{3}});
  auto c = counts.mutable_unchecked<1>();
  auto f = frames.mutable_unchecked<2>();
  std::string meta = "[";
  size_t row = 0;
  for (size_t i = 0; i < n_items; ++i) {
    const gulp::Item& item = chunk.items[i];
    ids.append(py::str(item.id));
    c(i) = static_cast<int64_t>(item.frames.size());
    for (const gulp::FrameRef& ref : item.frames) {
      // Each <= the data file's size (checked): fits an int64.
      f(row, 0) = static_cast<int64_t>(ref.offset);
      f(row, 1) = static_cast<int64_t>(ref.pad);
      f(row, 2) = static_cast<int64_t>(ref.total_length);
      ++row;
    }
    if (i > 0) meta += ',';
    meta += item.all_meta_json.empty() ? "[]" : item.all_meta_json;
  }
  meta += ']';
  py::dict d;
  d["number"] = number;
  d["data_path"] = chunk.data_path;
  d["meta_path"] = chunk.meta_path;
  d["data_size"] = chunk.data_size;
  d["ids"] = std::move(ids);
  d["frame_counts"] = std::move(counts);
  d["frames"] = std::move(frames);
  d["meta_data"] = py::str(meta);
  return d;
}

py::list ChunksToPython(const gulp::GulpDirectory& gd,
                        const std::vector<gulp::ChunkFiles>& files) {
  py::list out;
  for (size_t c = 0; c < gd.chunks.size(); ++c) {
    out.append(ChunkToPython(gd.chunks[c], files[c].number));
  }
  return out;
}

py::object OrNone(bool present, py::object value) {
  return present ? std::move(value) : py::none();
}

py::dict ProblemToPython(const gulp::Problem& p) {
  py::dict d;
  d["severity"] = p.error ? "error" : "warning";
  // Messages are escaped where they are made; a file name may still be any bytes.
  d["file"] = tfg::ValidUtf8(p.file);
  d["id"] = OrNone(p.has_id, py::str(p.id));
  d["frame"] = OrNone(p.frame >= 0, py::int_(p.frame));
  d["offset"] = OrNone(p.offset >= 0, py::int_(p.offset));
  d["message"] = tfg::ValidUtf8(p.message);
  return d;
}

gulp::IndexOptions Options(const std::string& label_field, bool require_chunks = true) {
  gulp::IndexOptions options;
  options.label_field = label_field;
  options.keep_all_meta = true;
  options.require_chunks = require_chunks;
  return options;
}

// The directory's chunks, as GulpDirectory reads them; raises the first error.
py::list LoadDirectory(const std::string& path, bool require_chunks) {
  gulp::GulpDirectory gd;
  gulp::ChunkScan scan;
  tfg::Status first;
  {
    py::gil_scoped_release release;
    gulp::CheckGulpDirectory(path, Options("", require_chunks), &gd, &scan,
                             gulp::StopAtFirstError(&first));
  }
  ThrowIfError(first);
  return ChunksToPython(gd, scan.chunks);
}

py::dict LoadChunk(const std::string& meta_path, const std::string& data_path) {
  gulp::ChunkIndex index;
  tfg::Status status;
  {
    py::gil_scoped_release release;
    status = gulp::LoadChunkIndex(meta_path, data_path, Options(""), &index);
  }
  ThrowIfError(status);
  return ChunkToPython(index, -1);
}

// Every finding, for `tf-gulp check` / `info`.
py::dict CheckDirectory(const std::string& path, const std::string& label_field,
                        std::function<void(uint64_t)> progress) {
  gulp::GulpDirectory gd;
  gulp::ChunkScan scan;
  std::vector<gulp::Problem> problems;
  {
    py::gil_scoped_release release;
    const gulp::ProblemSink collect = gulp::CollectProblems(&problems);
    gulp::ChunkProgress on_chunk;
    if (progress) {
      on_chunk = [&progress](uint64_t bytes) {
        py::gil_scoped_acquire acquire;
        progress(bytes);
      };
    }
    gulp::CheckGulpDirectory(path, Options(label_field), &gd, &scan, collect, on_chunk);
    if (!gd.chunks.empty()) gulp::CheckLabels(gd, collect);
  }
  py::list found;
  for (const gulp::Problem& p : problems) found.append(ProblemToPython(p));
  py::dict d;
  // Chunks the scan found; those whose index failed hold no items.
  d["chunks"] = gd.chunks.size() == scan.chunks.size() ? ChunksToPython(gd, scan.chunks)
                                                        : py::list();
  d["problems"] = std::move(found);
  d["notes"] = scan.notes;
  d["record_valid"] = scan.record.valid();
  return d;
}

py::object CheckIngestRecord(py::bytes text, const std::string& path) {
  gulp::IngestRecord record;
  gulp::ParseIngestRecord(std::string(text), path, &record);
  return record.problem.empty() ? py::object(py::none()) : py::object(py::str(tfg::ValidUtf8(record.problem)));
}

// Decodes one frame as GulpDataset does (the core's header limits, then
// libjpeg-turbo into RGB, or gray): raises the same error the dataset would
// (a CMYK JPEG, which other decoders convert, is one), else returns
// (height, width). For tf-gulp check --decode.
py::tuple DecodeFrame(py::bytes frame, bool gray) {
  const std::string bytes(frame);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  tfg::jpeg::ImageInfo info;
  tfg::Status status;
  {
    py::gil_scoped_release release;
    status = tfg::picture::ReadHeader(data, bytes.size(), &info);
    if (status.ok()) {
      tfg::jpeg::DecodeOptions options;
      options.color_space = gray ? tfg::jpeg::ColorSpace::kGray : tfg::jpeg::ColorSpace::kRgb;
      std::vector<uint8_t> pixels(static_cast<size_t>(info.width) * info.height *
                                  tfg::jpeg::Channels(options.color_space));
      status = tfg::picture::Decode(data, bytes.size(), options, info.width, info.height,
                                 pixels.data());
    }
  }
  ThrowIfError(status);
  return py::make_tuple(info.height, info.width);
}

// Decodes one JPEG as the Python readers decode frames (GulpDataset's default
// settings; a one-component JPEG as gray): (H, W, 3) or (H, W) uint8.
py::array_t<uint8_t> DecodeJpeg(py::bytes frame) {
  const std::string bytes(frame);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  tfg::jpeg::ImageInfo info;
  ThrowIfError(tfg::picture::ReadHeader(data, bytes.size(), &info));
  tfg::jpeg::DecodeOptions options;
  if (info.gray) options.color_space = tfg::jpeg::ColorSpace::kGray;
  std::vector<py::ssize_t> dims = {info.height, info.width};
  if (!info.gray) dims.push_back(3);
  py::array_t<uint8_t> out(dims);
  uint8_t* dst = out.mutable_data();
  tfg::Status status;
  {
    py::gil_scoped_release release;
    status = tfg::picture::Decode(data, bytes.size(), options, info.width, info.height, dst);
  }
  ThrowIfError(status);
  return out;
}

// label2idx.json read by the rules GulpDataset applies (cc/gulp LoadLabelMap).
py::dict LoadLabelMap(const std::string& path) {
  gulp::LabelMap labels;
  tfg::Status status;
  {
    py::gil_scoped_release release;
    status = gulp::LoadLabelMap(path, &labels);
  }
  ThrowIfError(status);
  py::dict out;
  for (const auto& [name, index] : labels) out[py::str(name)] = index;
  return out;
}

// Why the core's decoder refuses a JPEG whose header says `width` x `height`
// (its per-frame pixel limit, the pixels its bytes can encode), or None.
py::object JpegHeaderProblem(py::bytes frame, int width, int height) {
  const std::string bytes(frame);
  const tfg::Status status = tfg::jpeg::CheckHeaderLimits(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), width, height);
  return status.ok() ? py::object(py::none()) : py::object(py::str(status.message()));
}

bool JpegIsArithmeticCoded(py::bytes frame) {
  const std::string bytes(frame);
  return tfg::jpeg::IsArithmeticCoded(reinterpret_cast<const uint8_t*>(bytes.data()),
                                      bytes.size());
}

// One gulp data file, open for the Python readers (GulpChunk): elements are
// read through the core's element reader (cc/gulp/element_reader.h), as
// GulpDataset reads them, with the GIL released while reading and decoding.
class DataFile {
 public:
  explicit DataFile(const std::string& path) {
    tfg::Status status;
    {
      py::gil_scoped_release release;
      std::unique_ptr<tfg::RandomAccessFile> file;
      status = tfg::RandomAccessFile::Open(path, &file);
      file_ = std::move(file);
    }
    ThrowIfError(status);
  }

  // The open file, held by the caller while it reads without the GIL: a
  // close() from another thread meanwhile only drops this object's share.
  std::shared_ptr<const tfg::RandomAccessFile> file() const {
    if (file_ == nullptr) throw py::value_error("gulp data file is closed");
    return file_;
  }

  uint64_t size() const { return file()->size(); }

  // Up to `n` bytes at `offset` (fewer only at the end of the file).
  py::bytes Pread(uint64_t n, uint64_t offset) const {
    const std::shared_ptr<const tfg::RandomAccessFile> held = file();
    const tfg::RandomAccessFile& f = *held;
    const uint64_t end = std::min<uint64_t>(f.size(), offset + n);
    std::string out(offset < end ? end - offset : 0, '\0');
    tfg::Status status;
    {
      py::gil_scoped_release release;
      if (!out.empty()) status = f.ReadAt(offset, out.size(), out.data());
    }
    ThrowIfError(status);
    return py::bytes(out);
  }

  void Close() { file_.reset(); }
  std::string path() const { return file()->path(); }

  // The frames of item `id`, whose index rows are `rows` ((frames, 3):
  // offset, pad, total_length), picked by the selection (mode "all", "slice"
  // or "indices", Python's indexing rules): a list of JPEG bytes, or of
  // decoded uint8 arrays, (H, W, 3) RGB or (H, W) for a grayscale JPEG.
  py::tuple ReadElement(const std::string& meta_path, const std::string& id,
                       py::array_t<int64_t, py::array::c_style | py::array::forcecast> rows,
                       const std::string& mode, py::object start, py::object stop,
                       int64_t step, std::vector<int64_t> indices, bool decode,
                       uint64_t max_clip_bytes) {
    const std::shared_ptr<const tfg::RandomAccessFile> held = file();
    const tfg::RandomAccessFile& f = *held;
    if (rows.ndim() != 2 || rows.shape(1) != 3) {
      throw py::value_error("frame rows must be a (frames, 3) array");
    }
    tfg::gulp::Item item;
    item.id = id;
    auto r = rows.unchecked<2>();
    item.frames.resize(static_cast<size_t>(rows.shape(0)));
    for (py::ssize_t k = 0; k < rows.shape(0); ++k) {
      // An index the core did not judge (another serializer's): refuse what
      // no frame can be, before anything is read.
      if (r(k, 0) < 0 || r(k, 1) < 0 || r(k, 2) < r(k, 1)) {
        RaiseStatus(tfg::DataLossError(
            f.path(), ": id '", tfg::PrintableText(id), "' frame ", k, ": frame_info entry [",
            r(k, 0), ", ", r(k, 1), ", ", r(k, 2), "] is not [offset, pad, length] with ",
            "0 <= pad <= length"));
      }
      item.frames[k] = {static_cast<uint64_t>(r(k, 0)), static_cast<uint64_t>(r(k, 1)),
                        static_cast<uint64_t>(r(k, 2))};
    }
    gulp::ElementOptions options;
    options.decode = decode;
    options.max_clip_bytes = max_clip_bytes;
    gulp::FrameSelection& s = options.selection;
    if (mode == "slice") {
      s.mode = gulp::FrameSelection::Mode::kSlice;
      s.has_start = !start.is_none();
      s.has_stop = !stop.is_none();
      if (s.has_start) s.start = start.cast<int64_t>();
      if (s.has_stop) s.stop = stop.cast<int64_t>();
      s.step = step;
      ThrowIfError(gulp::ValidateFrameSelection(s));
    } else if (mode == "indices") {
      s.mode = gulp::FrameSelection::Mode::kIndices;
      s.indices = std::move(indices);
    }
    gulp::ElementReader reader(options);
    tfg::Status status;
    std::vector<std::string> jpegs;
    std::vector<gulp::FrameShape> shapes;
    {
      py::gil_scoped_release release;
      status = reader.Select(item, f.path(), meta_path, 0);
      if (status.ok() && !decode) {
        jpegs.resize(reader.num_frames());
        std::vector<char*> dst(jpegs.size());
        for (size_t k = 0; k < jpegs.size(); ++k) {
          jpegs[k].resize(reader.jpeg_length(k));
          dst[k] = jpegs[k].data();
        }
        status = reader.ReadJpegs(f, dst.data());
      } else if (status.ok()) {
        status = reader.ReadForDecode(f);
        if (status.ok()) status = reader.FrameShapes(&shapes);
      }
    }
    ThrowIfError(status);
    py::list out;
    py::list selected;
    for (size_t k = 0; k < reader.num_frames(); ++k) selected.append(reader.frame(k));
    if (!decode) {
      for (const std::string& jpeg : jpegs) out.append(py::bytes(jpeg));
      return py::make_tuple(out, selected);
    }
    // Arrays allocated here (sizes known and checked), decoded into without the GIL.
    std::vector<py::array_t<uint8_t>> arrays;
    std::vector<uint8_t*> dst;
    for (const gulp::FrameShape& shape : shapes) {
      std::vector<py::ssize_t> dims = {shape.height, shape.width};
      if (shape.channels != 1) dims.push_back(shape.channels);
      arrays.emplace_back(dims);
      dst.push_back(arrays.back().mutable_data());
    }
    {
      py::gil_scoped_release release;
      for (size_t k = 0; k < shapes.size() && status.ok(); ++k) {
        status = reader.DecodeFrame(k, shapes[k], dst[k]);
      }
    }
    ThrowIfError(status);
    for (auto& a : arrays) out.append(std::move(a));
    return py::make_tuple(out, selected);
  }

 private:
  std::shared_ptr<tfg::RandomAccessFile> file_;
};

}  // namespace

void RegisterGulp(py::module_& m) {
  m.attr("GULP_DEFAULT_MAX_CLIP_BYTES") = gulp::kDefaultMaxClipBytes;
  m.attr("JPEG_MAX_FRAME_PIXELS") = tfg::jpeg::kMaxFramePixels;
  m.attr("JPEG_MAX_PIXELS_PER_BYTE") = tfg::jpeg::kMaxPixelsPerByte;
  m.def("jpeg_header_problem", &JpegHeaderProblem, py::arg("frame"), py::arg("width"),
        py::arg("height"),
        "Why the core's decoder refuses this JPEG's header (its limits), or None.");
  m.def("jpeg_is_arithmetic_coded", &JpegIsArithmeticCoded, py::arg("frame"),
        "Whether the JPEG's frame header says arithmetic coding.");
  py::class_<DataFile>(m, "GulpDataFile",
                       "A gulp data file open for reading (local, or remote once "
                       "set_remote_file_system is called).")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def("size", &DataFile::size, "The file's size when it was opened.")
      .def("pread", &DataFile::Pread, py::arg("size"), py::arg("offset"),
           "Up to `size` bytes at `offset` (fewer only at the end of the file).")
      .def("close", &DataFile::Close)
      .def_property_readonly("path", &DataFile::path)
      .def("read_element", &DataFile::ReadElement, py::arg("meta_path"), py::arg("id"),
           py::arg("rows"), py::arg("mode"), py::arg("start"), py::arg("stop"),
           py::arg("step"), py::arg("indices"), py::arg("decode"), py::arg("max_clip_bytes"),
           "The selected frames of one item, read (and decoded) as GulpDataset reads them.");
  m.def("gulp_decode_frame", &DecodeFrame, py::arg("frame"), py::arg("gray") = false,
        "Decodes one JPEG frame as GulpDataset does; raises its error, else (height, width).");
  m.def("gulp_decode_jpeg", &DecodeJpeg, py::arg("frame"),
        "Decodes one JPEG as the Python gulp readers do (GulpDataset's settings): "
        "(H, W, 3) RGB or (H, W) for a grayscale JPEG.");
  m.def("gulp_load_label_map", &LoadLabelMap, py::arg("path"),
        "label2idx.json as {label: index}, judged as GulpDataset judges it.");
  m.def("gulp_load_directory", &LoadDirectory, py::arg("path"), py::arg("require_chunks") = true,
        "The chunks of a gulp directory (any TensorFlow file system once "
        "set_remote_file_system is called), judged by cc/gulp's rules: raises the "
        "first error, as GulpDataset does.");
  m.def("gulp_load_chunk", &LoadChunk, py::arg("meta_path"), py::arg("data_path"),
        "One chunk's index, judged by cc/gulp's rules; raises the first error.");
  m.def("gulp_check_directory", &CheckDirectory, py::arg("path"), py::arg("label_field"),
        py::arg("progress") = nullptr,
        "Every finding of cc/gulp's rules (errors: what readers refuse; warnings) and the "
        "chunks that parsed, for tf-gulp check/info.");
  m.def("gulp_check_ingest_record", &CheckIngestRecord, py::arg("text"), py::arg("path"),
        "Why `text` is not a valid ingest record (.tf_gulp_ingest.json), or None.");
  m.def("set_remote_file_system", &SetPythonRemoteFileSystem, py::arg("impl"),
        "Serves every non-local path of the core through `impl` (stat, listdir, read).");
}

}  // namespace pybind
}  // namespace tf_gulp
