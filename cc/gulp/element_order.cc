#include "cc/gulp/element_order.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "cc/util/stateless_random.h"

namespace tfg {
namespace gulp {
namespace {

template <typename T>
void Permute(std::vector<T>* values, KeyedRandom* random) {
  for (size_t i = values->size(); i > 1; --i) {
    std::swap((*values)[i - 1], (*values)[random->Below(i)]);
  }
}

}  // namespace

Status BuildElements(const GulpDirectory& directory,
                     const std::vector<std::string>& ids,
                     const LabelMap* labels, bool resolve_labels,
                     std::vector<ElementRef>* elements) {
  elements->clear();
  std::unordered_set<std::string> wanted(ids.begin(), ids.end());
  std::unordered_set<std::string> found;
  for (size_t c = 0; c < directory.chunks.size(); ++c) {
    const ChunkIndex& chunk = directory.chunks[c];
    for (size_t i = 0; i < chunk.items.size(); ++i) {
      const Item& item = chunk.items[i];
      if (!wanted.empty()) {
        if (wanted.count(item.id) == 0) continue;
        found.insert(item.id);
      }
      ElementRef ref;
      ref.chunk = static_cast<int32_t>(c);
      ref.item = static_cast<int32_t>(i);
      if (resolve_labels) {
        TFG_RETURN_IF_ERROR(ResolveLabel(item, chunk.meta_path, labels, &ref.label));
      }
      elements->push_back(ref);
    }
  }
  if (found.size() != wanted.size()) {
    for (const std::string& id : ids) {
      if (found.count(id) == 0) {
        return NotFoundError(directory.path, ": id '", id,
                             "' (from the ids filter) is not in the directory");
      }
    }
  }
  return Status::Ok();
}

std::vector<int64_t> EpochOrder(const std::vector<ElementRef>& elements,
                                bool shuffle, uint64_t seed, int64_t epoch,
                                int64_t chunk_window) {
  std::vector<int64_t> order(elements.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  if (!shuffle || order.size() < 2) return order;

  // Group element positions by chunk, chunks in storage order.
  std::vector<std::vector<int64_t>> by_chunk;
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i == 0 || elements[i].chunk != elements[i - 1].chunk) {
      by_chunk.emplace_back();
    }
    by_chunk.back().push_back(static_cast<int64_t>(i));
  }
  KeyedRandom chunk_random(HashKey({seed, static_cast<uint64_t>(epoch), 1}));
  Permute(&by_chunk, &chunk_random);

  const size_t window = static_cast<size_t>(std::max<int64_t>(1, chunk_window));
  order.clear();
  for (size_t start = 0; start < by_chunk.size(); start += window) {
    const size_t window_begin = order.size();
    for (size_t c = start; c < std::min(by_chunk.size(), start + window); ++c) {
      order.insert(order.end(), by_chunk[c].begin(), by_chunk[c].end());
    }
    std::vector<int64_t> part(order.begin() + window_begin, order.end());
    KeyedRandom item_random(
        HashKey({seed, static_cast<uint64_t>(epoch), 2, start}));
    Permute(&part, &item_random);
    std::copy(part.begin(), part.end(), order.begin() + window_begin);
  }
  return order;
}

}  // namespace gulp
}  // namespace tfg
