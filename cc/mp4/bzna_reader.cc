#include "cc/mp4/bzna_reader.h"

#include <cstring>
#include <utility>

#include "cc/mp4/entry_index_cache.h"

namespace tfg {
namespace mp4 {

Status EntryReader::Open(const std::string& path, std::unique_ptr<EntryReader>* reader) {
  std::shared_ptr<const EntryIndex> index;
  TFG_RETURN_IF_ERROR(EntryIndexCache::Global()->Get(path, &index));
  std::unique_ptr<RandomAccessFile> file;
  TFG_RETURN_IF_ERROR(RandomAccessFile::Open(path, &file));
  *reader = std::make_unique<EntryReader>(std::move(file), std::move(index));
  return Status::Ok();
}

std::string EntryReader::Describe(uint64_t entry) const {
  return internal::StrCat(path(), ": sample ", entry, " (byte offset ",
                          entry < entries() ? index_->offsets[entry] : 0, ")");
}

Status EntryReader::ReadRange(uint64_t offset, uint64_t size, const std::string& what,
                              void* dst) const {
  // The index was checked against the file when it was read; the file may
  // have been replaced by a shorter one since (a cached index, a new open).
  if (offset > file_->size() || size > file_->size() - offset) {
    return DataLossError(what, ": ", size, " bytes at byte offset ", offset,
                         " run past the end of the file (", file_->size(), " bytes)");
  }
  Status read = file_->ReadAt(offset, size, dst);
  if (read.ok()) return read;
  return Status(read.code(), internal::StrCat(what, ": ", read.message()));
}

Status EntryReader::Read(uint64_t entry, char* sample, int64_t* target) const {
  if (entry >= entries()) {
    return InvalidArgumentError(path(), ": entry ", entry, " is outside the file's ",
                                entries(), " entries");
  }
  TFG_RETURN_IF_ERROR(
      ReadRange(index_->offsets[entry], index_->sizes[entry], Describe(entry), sample));
  const int64_t at = index_->target_offsets[entry];
  if (at < 0) {
    *target = -1;
    return Status::Ok();
  }
  unsigned char bytes[kTargetBytes];
  TFG_RETURN_IF_ERROR(ReadRange(static_cast<uint64_t>(at), kTargetBytes,
                                internal::StrCat(path(), ": target of entry ", entry), bytes));
  uint64_t value = 0;  // little-endian, as Benzina writes it
  for (int k = static_cast<int>(kTargetBytes) - 1; k >= 0; --k) value = (value << 8) | bytes[k];
  *target = static_cast<int64_t>(value);
  return Status::Ok();
}

}  // namespace mp4
}  // namespace tfg
