#include "sim/scenario/input_limits.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "sim/scenario/scenario_error.h"

namespace rdmasim {
namespace {

using nlohmann::json;

std::string size_text(size_t bytes) {
  if (bytes % (size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// "line:column" of byte offset `byte` (0-based) in `text`.
std::string line_col(const std::string& text, size_t byte) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

// Builds the json value like nlohmann's own DOM parser, checking the limits
// before each step deeper, so that no value deeper than the limit is made.
class BoundedBuilder {
 public:
  BoundedBuilder(json& root, std::string path) : root_(root), base_(std::move(path)) {}

  // Set when the builder stopped the parse (a limit), or the parser did (a
  // syntax error: `syntax` true).
  std::string error;
  bool syntax = false;

  bool null() { return add(json(nullptr)); }
  bool boolean(bool v) { return add(json(v)); }
  bool number_integer(json::number_integer_t v) { return add(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return add(json(v)); }
  bool number_float(json::number_float_t v, const std::string&) { return add(json(v)); }
  bool string(std::string& v) {
    if (v.size() > kMaxStringBytes) {
      return fail(here(), "a string of " + std::to_string(v.size()) + " bytes is too long",
                  "a string of at most " + std::to_string(kMaxStringBytes) + " bytes");
    }
    return add(json(std::move(v)));
  }
  bool binary(json::binary_t&) { return fail(here(), "binary data", "JSON text"); }
  bool start_object(size_t) { return open(json::object()); }
  bool start_array(size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& k) {
    Frame& f = stack_.back();
    if (k.size() > kMaxKeyBytes) {
      return fail(join(f.path, k), "a key of " + std::to_string(k.size()) + " bytes is too long",
                  "a key of at most " + std::to_string(kMaxKeyBytes) + " bytes");
    }
    if (f.value->contains(k)) {
      return fail(join(f.path, k), "duplicate key", "each key at most once in an object");
    }
    f.key = k;
    f.slot = &(*f.value)[k];
    return true;
  }
  bool parse_error(size_t position, const std::string& token,
                   const nlohmann::detail::exception& ex) {
    position_ = position;
    if (ex.id == 406) {  // out_of_range: a number beyond a double
      return fail(here(), clip(token) + " is beyond the range of a number",
                  "a number of magnitude below 1.8e308");
    }
    syntax = true;
    std::string what = ex.what();
    const size_t cut = what.find("syntax error");
    if (cut != std::string::npos) what = what.substr(cut);
    // The token nlohmann echoes may be a whole 60 MB string: clip it.
    const std::string marker = "; last read: '";
    if (const size_t at = what.find(marker); at != std::string::npos) {
      std::string last = what.substr(at + marker.size());
      if (!last.empty() && last.back() == '\'') last.pop_back();
      what = what.substr(0, at + marker.size()) + clip(last) + "'";
    }
    error = what;
    return false;
  }
  size_t position() const { return position_; }

 private:
  struct Frame {
    json* value;
    std::string path;
    std::string key;       // objects: the key being read
    json* slot = nullptr;  // objects: where its value goes
  };

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? clip(key) : path + "." + clip(key);
  }
  // The JSON path of the next value.
  std::string here() const {
    if (stack_.empty()) return base_;
    const Frame& f = stack_.back();
    if (f.value->is_array()) return f.path + "[" + std::to_string(f.value->size()) + "]";
    return join(f.path, f.key);
  }
  bool fail(const std::string& path, const std::string& problem, const std::string& expected) {
    error = (path.empty() ? std::string("scenario") : clip(path)) + ": " + problem + " (expected " +
            expected + ")";
    return false;
  }
  json* place(json&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame& f = stack_.back();
    if (f.value->is_array()) {
      f.value->push_back(std::move(v));
      return &f.value->back();
    }
    *f.slot = std::move(v);
    return f.slot;
  }
  bool add(json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(json&& empty) {
    const std::string path = here();
    if (stack_.size() >= static_cast<size_t>(kMaxJsonDepth)) {
      return fail(path, "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels",
                  "at most " + std::to_string(kMaxJsonDepth) + " levels of arrays and objects");
    }
    json* v = place(std::move(empty));
    stack_.push_back(Frame{v, path, std::string(), nullptr});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  json& root_;
  std::string base_;
  std::vector<Frame> stack_;
  size_t position_ = 0;
};

// Parses; throws on a limit; on a syntax error throws too, unless
// `syntax_ok`, which returns nothing instead.
std::optional<json> parse(const std::string& text, const std::string& where,
                          const std::string& path, bool syntax_ok) {
  if (const size_t nul = text.find('\0'); nul != std::string::npos) {
    // nlohmann stops at a NUL as at the end of input: what follows would be
    // ignored.
    throw ScenarioError(where + ":" + line_col(text, nul) + ": invalid JSON: a NUL byte at byte " +
                        std::to_string(nul) + " (expected text without NUL bytes)");
  }
  json root;
  BoundedBuilder b(root, path);
  if (json::sax_parse(text, &b)) return root;
  if (!b.syntax) throw ScenarioError(b.error);
  if (syntax_ok) return std::nullopt;
  // nlohmann's position counts the byte it stopped at (1-based).
  const size_t at = b.position() > 0 ? b.position() - 1 : 0;
  throw ScenarioError(where + ":" + line_col(text, at) + ": invalid JSON: " + b.error);
}

}  // namespace

std::string clip(const std::string& s, size_t n) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // inside a character
    if (chars == n) return s.substr(0, i) + "…";
    ++chars;
  }
  return s;
}

std::optional<std::string> read_file_bounded(const std::string& path, size_t limit,
                                             std::string& out) {
  out.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string(std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) return std::string("it is a directory");
  std::vector<char> buf(size_t{1} << 16);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::string(std::strerror(errno));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limit) {
      out.clear();
      return "it is larger than " + size_text(limit);
    }
    out.append(buf.data(), static_cast<size_t>(n));
  }
  return std::nullopt;
}

json parse_json_bounded(const std::string& text, const std::string& where,
                        const std::string& path) {
  return *parse(text, where, path, false);
}

std::optional<json> try_parse_json_bounded(const std::string& text, const std::string& path) {
  return parse(text, path, path, true);
}

int json_depth(const json& v, int limit) {
  // Depth-first with an explicit stack: (value, its depth).
  int deepest = 0;
  std::vector<std::pair<const json*, int>> todo{{&v, 0}};
  while (!todo.empty()) {
    const auto [j, d] = todo.back();
    todo.pop_back();
    if (!j->is_structured()) continue;
    const int inner = d + 1;
    deepest = std::max(deepest, inner);
    if (deepest > limit) return deepest;
    for (const json& e : *j) todo.emplace_back(&e, inner);
  }
  return deepest;
}

}  // namespace rdmasim
