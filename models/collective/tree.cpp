#include "models/collective/tree.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace rdmasim {

Tree binary_tree(uint32_t n) {
  assert(n >= 1);
  Tree t(n);
  const auto ni = static_cast<int64_t>(n);
  for (int64_t r = 1; r < ni; ++r) {
    const int64_t bit = r & -r;  // lowest set bit
    int64_t up = (r ^ bit) | (bit << 1);
    if (up >= ni) up = r ^ bit;
    t[static_cast<size_t>(r)].parent = static_cast<int32_t>(up);
  }
  // Children from the parents, smaller first (ranks visited in order).
  for (uint32_t r = 1; r < n; ++r) {
    TreeLinks& p = t[static_cast<size_t>(t[r].parent)];
    p.child[p.child[0] < 0 ? 0 : 1] = static_cast<int32_t>(r);
  }
  return t;
}

std::array<Tree, 2> double_binary_tree(uint32_t n) {
  assert(n >= 2);
  std::array<Tree, 2> d{binary_tree(n), Tree(n)};
  const Tree& t0 = d[0];
  // Tree 1: rank r takes the place of m(r) in tree 0.
  const auto place = [n](int32_t r) {
    const auto u = static_cast<uint32_t>(r);
    return n % 2 == 0 ? n - 1 - u : (u + n - 1) % n;  // mirrored, or shifted by one
  };
  const auto back = [n](int32_t r) {  // the inverse of place
    const auto u = static_cast<uint32_t>(r);
    return static_cast<int32_t>(n % 2 == 0 ? n - 1 - u : (u + 1) % n);
  };
  for (uint32_t r = 0; r < n; ++r) {
    const TreeLinks& l = t0[place(static_cast<int32_t>(r))];
    TreeLinks& m = d[1][r];
    m.parent = l.parent < 0 ? -1 : back(l.parent);
    std::array<int32_t, kMaxTreeArity> c{l.child[0] < 0 ? -1 : back(l.child[0]),
                                         l.child[1] < 0 ? -1 : back(l.child[1]), -1};
    if (c[0] >= 0 && c[1] >= 0 && c[1] < c[0]) std::swap(c[0], c[1]);
    if (c[0] < 0) std::swap(c[0], c[1]);
    m.child = c;
  }
  return d;
}

std::array<Tree, 2> channel_trees(uint32_t n, const ServerLayout* servers, uint32_t c) {
  if (servers == nullptr) return double_binary_tree(n);
  const uint32_t g = servers->gpus, nodes = servers->servers();
  assert(g >= 2 && nodes >= 2 && servers->rank.size() == n);
  // intra[i] of server s in channel c (ncclTopoPreset's treeIntra): GPU
  // (c + i) mod g, so intra[0] is the GPU on rail c mod g.
  const auto intra = [&](uint32_t s, uint32_t i) {
    return static_cast<int32_t>(servers->rank[size_t{s} * g + (c + i) % g]);
  };
  const std::array<Tree, 2> over = double_binary_tree(nodes);
  std::array<Tree, 2> out{Tree(n), Tree(n)};
  for (size_t t = 0; t < 2; ++t) {
    for (uint32_t s = 0; s < nodes; ++s) {
      const TreeLinks& node = over[t][s];
      for (uint32_t i = 0; i < g; ++i) {
        TreeLinks& l = out[t][static_cast<size_t>(intra(s, i))];
        size_t k = 0;
        if (i + 1 < g) l.child[k++] = intra(s, i + 1);  // down[0]: the chain
        if (i > 0) {
          l.parent = intra(s, i - 1);
          continue;
        }
        // NCCL_TOPO_PATTERN_TREE: treeToParent = treeToChild0 = treeToChild1
        // = intra[0] (connectTrees' setTreeUp and setTreeDown).
        if (node.parent >= 0) l.parent = intra(static_cast<uint32_t>(node.parent), 0);
        for (size_t x = 0; x < node.children(); ++x) {
          l.child[k++] = intra(static_cast<uint32_t>(node.child[x]), 0);
        }
      }
    }
  }
  return out;
}

uint32_t tree_depth(const Tree& t) {
  uint32_t depth = 0;
  for (size_t r = 0; r < t.size(); ++r) {
    uint32_t d = 0;
    for (int32_t p = t[r].parent; p >= 0; p = t[static_cast<size_t>(p)].parent) ++d;
    depth = std::max(depth, d);
  }
  return depth;
}

uint32_t nccl_tree_depth(uint32_t ranks, uint32_t nodes) {
  assert(nodes >= 1 && ranks % nodes == 0);
  return ranks / nodes - 1 + static_cast<uint32_t>(std::bit_width(nodes) - 1);
}

int64_t tree_chunk_bytes(int64_t bytes, uint32_t tree_channels, uint32_t depth,
                         int64_t slot_bytes) {
  int64_t chunk = slot_bytes;
  const auto d = static_cast<int64_t>(depth);
  const auto per = [&] { return bytes / (int64_t{tree_channels} * chunk); };
  while (per() < d * 8 && chunk > 131072) chunk /= 2;
  while (per() < d * 4 && chunk > 65536) chunk /= 2;
  while (per() < d && chunk > 32768) chunk /= 2;
  return chunk;
}

CollectivePlan tree_plan(uint32_t n, int64_t bytes, uint32_t channels, int64_t slot_bytes,
                         const ServerLayout* servers) {
  assert(n >= 2 && channels >= 1 && bytes > 0 && bytes % 4 == 0);
  const uint32_t tree_channels = 2 * channels;
  // NCCL's depth estimate, not the trees' own depth (which it is not when
  // the node count is not a power of two).
  const int64_t chunk =
      tree_chunk_bytes(bytes, tree_channels,
                       nccl_tree_depth(n, servers != nullptr ? servers->servers() : n), slot_bytes);
  CollectivePlan p;
  p.ranks = n;
  p.steps = 2;
  // Per tree channel j = 2c + t (channel c, tree t): the ranks' up and down
  // connections, 2 (n-1) each, in rank order without the root.
  // up(j, r): r to its parent; down(j, r) = up(j, r) + 1: the parent to r.
  std::vector<int32_t> slot_of(n);
  const int64_t elements = bytes / 4;  // float32
  p.conns.reserve(size_t{tree_channels} * 2 * (n - 1));
  std::array<Tree, 2> trees;
  for (uint32_t j = 0; j < tree_channels; ++j) {
    // Without servers every channel has the same trees.
    if (j == 0 || (servers != nullptr && j % 2 == 0)) trees = channel_trees(n, servers, j / 2);
    const Tree& t = trees[j % 2];
    const auto base = static_cast<int32_t>(p.conns.size());
    int32_t next = base;
    for (uint32_t r = 0; r < n; ++r) {
      slot_of[r] = t[r].parent < 0 ? -1 : next;
      next += t[r].parent < 0 ? 0 : 2;
    }
    const auto up = [&](int32_t r) { return slot_of[static_cast<size_t>(r)]; };
    // This tree channel's share of the elements, the remainder spread over
    // the first ones.
    const int64_t share =
        4 * (elements / tree_channels + (int64_t{j} < elements % tree_channels ? 1 : 0));
    const auto m = static_cast<uint32_t>((share + chunk - 1) / chunk);
    const auto root_it =
        std::find_if(t.begin(), t.end(), [](const TreeLinks& l) { return l.parent < 0; });
    const TreeLinks& root = *root_it;
    for (uint32_t r = 0; r < n; ++r) {
      const TreeLinks& l = t[r];
      if (l.parent < 0) continue;
      const TreeLinks& pl = t[static_cast<size_t>(l.parent)];
      const bool parent_is_root = pl.parent < 0;
      PlanConnection u{r, static_cast<uint32_t>(l.parent), j, {}};
      PlanConnection d{static_cast<uint32_t>(l.parent), r, j, {}};
      u.elems.resize(m);
      d.elems.resize(m);
      for (uint32_t k = 0; k < m; ++k) {
        const int64_t b = k + 1 < m ? chunk : share - int64_t{m - 1} * chunk;
        // Up: r's own data reduced with what each child sent up.
        PlanElement& e = u.elems[k];
        e.bytes = b;
        e.step = 0;
        e.reduce = true;
        for (size_t c = 0; c < l.children(); ++c) {
          e.dep_conn[c] = up(l.child[c]);
          e.dep_elem[c] = k;
        }
        // At the parent it goes on up, or (at the root) back down to each
        // of the root's children.
        e.consumers = static_cast<uint8_t>(parent_is_root ? root.children() : 1);
        // Down: what the parent got from its parent, or (the root) the
        // root's reduction of its children's data.
        PlanElement& f = d.elems[k];
        f.bytes = b;
        f.step = 1;
        if (parent_is_root) {
          for (size_t c = 0; c < pl.children(); ++c) {
            f.dep_conn[c] = up(pl.child[c]);
            f.dep_elem[c] = k;
          }
        } else {
          f.dep_conn[0] = up(l.parent) + 1;
          f.dep_elem[0] = k;
        }
        f.consumers = static_cast<uint8_t>(l.children());
      }
      p.conns.push_back(std::move(u));
      p.conns.push_back(std::move(d));
    }
    assert(static_cast<int32_t>(p.conns.size()) == next);
  }
  return p;
}

}  // namespace rdmasim
