#include "calibrate/kineto_trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <simdjson.h>
#include <unordered_map>
#include <zlib.h>

#include "core/error.hpp"

namespace parasim::calibrate {
namespace {

namespace od = simdjson::ondemand;

[[noreturn]] void fail(const std::string& file, const std::string& message) { throw InputError({file, 0, 0}, {}, message); }

/// Text with simdjson's padding behind it, decompressed or read straight into place.
struct PaddedText {
  std::unique_ptr<char[]> data;
  std::size_t size = 0;
  std::size_t capacity = 0;
  void reserve(std::size_t n) {
    if (n + simdjson::SIMDJSON_PADDING <= capacity) return;
    const std::size_t cap = n + simdjson::SIMDJSON_PADDING;
    auto fresh = std::make_unique_for_overwrite<char[]>(cap);  // inflate writes it: no zeroing
    if (size) std::memcpy(fresh.get(), data.get(), size);
    data = std::move(fresh);
    capacity = cap;
  }
  std::string_view view() const { return {data.get(), size}; }
};

/// Inflates gzip or zlib data into `out` (after what it holds). Concatenated gzip members are read
/// one after another, as gzip(1) does.
void inflate_into(std::string_view in, PaddedText& out, const std::string& file) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) fail(file, "cannot start zlib");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = 0;
  std::size_t consumed = 0;
  int rc = Z_OK;
  while (true) {
    if (z.avail_in == 0 && consumed < in.size()) {
      const std::size_t chunk = std::min<std::size_t>(in.size() - consumed, 1u << 30);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed));
      z.avail_in = static_cast<uInt>(chunk);
      consumed += chunk;
    }
    if (out.capacity - simdjson::SIMDJSON_PADDING - out.size < (1u << 16)) out.reserve(std::max(out.size * 3 / 2, out.size + (1u << 20)));
    const std::size_t room = std::min<std::size_t>(out.capacity - simdjson::SIMDJSON_PADDING - out.size, 1u << 30);
    z.next_out = reinterpret_cast<Bytef*>(out.data.get() + out.size);
    z.avail_out = static_cast<uInt>(room);
    rc = inflate(&z, Z_NO_FLUSH);
    out.size += room - z.avail_out;
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow.
      if (z.avail_in == 0 && consumed == in.size()) break;
      if (inflateReset(&z) != Z_OK) break;
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && consumed == in.size()) {
      inflateEnd(&z);
      fail(file, "truncated gzip data (the file ends inside the compressed stream)");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string why = z.msg ? z.msg : "inflate failed";
      inflateEnd(&z);
      fail(file, fmt::format("corrupt gzip data: {}", why));
    }
  }
  inflateEnd(&z);
}

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f && static_cast<unsigned char>(data[1]) == 0x8b;
}

PaddedText load_text(std::string_view raw, const std::string& file) {
  PaddedText text;
  if (is_gzip(raw)) {
    // The buffer grows as inflate writes (JSON traces deflate 5-30x). The gzip trailer's size is not
    // used: the last bytes of a truncated file are no trailer, and trusted they would size the buffer
    // up to 4 GiB before inflate fails.
    text.reserve(raw.size() * 8);
    inflate_into(raw, text, file);
  } else {
    text.reserve(raw.size());
    std::memcpy(text.data.get(), raw.data(), raw.size());
    text.size = raw.size();
  }
  std::memset(text.data.get() + text.size, 0, simdjson::SIMDJSON_PADDING);
  return text;
}

std::string json_error_message(simdjson::error_code e) {
  switch (e) {
    case simdjson::EMPTY: return "no JSON in the file (it is empty or only whitespace)";
    case simdjson::UNCLOSED_STRING:
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT: return "truncated JSON: the text ends inside a string, list or object";
    case simdjson::INCORRECT_TYPE: return "JSON of another shape: a Chrome trace is an object with a traceEvents list";
    default: return fmt::format("not valid JSON ({})", simdjson::error_message(e));
  }
}

/// The error for text that is not JSON, keeping simdjson's reason where it says more than "tape error".
std::string malformed(simdjson::error_code e) {
  switch (e) {
    case simdjson::TAPE_ERROR: return "not valid JSON (malformed: a value, comma or bracket is missing or out of place)";
    default: return json_error_message(e);
  }
}

/// A string field, or empty when it is not a string.
std::string_view str(od::value v) {
  std::string_view s;
  if (v.get_string().get(s)) return {};
  return s;
}

/// An integer field (an id, a count): `fallback` when it is not a number, or a number written as a
/// double beyond int64 (`beyond` then set: a count says so, an id is taken as absent).
std::int64_t integer(od::value v, std::int64_t fallback = -1, double* beyond = nullptr) {
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::number) return fallback;
  std::int64_t i;
  if (!v.get_int64().get(i)) return i;
  double d;
  if (v.get_double().get(d)) return fallback;
  // [-2^63, 2^63): where the conversion is defined.
  if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<std::int64_t>(d);
  if (beyond) *beyond = d;
  return fallback;
}

/// A count or index that must fit an int: a larger one is an error naming the key, never a wrapped number.
int small_integer(od::value v, const std::string& file, std::string_view key, std::int64_t fallback = 0) {
  double beyond = 0;
  const std::int64_t i = integer(v, fallback, &beyond);
  if (beyond != 0) fail(file, fmt::format("{}: {:g} is out of range for a count or index", key, beyond));
  if (i < std::numeric_limits<int>::min() || i > std::numeric_limits<int>::max()) {
    fail(file, fmt::format("{}: {} is out of range for a count or index", key, i));
  }
  return static_cast<int>(i);
}

double number(od::value v, double fallback = 0) {
  double d;
  if (v.get_double().get(d)) return fallback;
  return d;
}

/// A number's JSON token without what may follow it in the text (whitespace, a comma).
std::string_view number_token(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t' || text.back() == ',')) {
    text.remove_suffix(1);
  }
  return text;
}

/// A time in microseconds as nanoseconds (0 when it is not a number); one beyond int64 nanoseconds
/// (about 292 years) is an error naming the key.
std::int64_t time_ns(od::value v, const std::string& file, std::string_view key) {
  od::json_type t;
  if (v.type().get(t) || t != od::json_type::number) return 0;
  const std::string_view raw = number_token(v.raw_json_token());
  const auto ns = microseconds_text_to_ns(raw);
  if (!ns) fail(file, fmt::format("traceEvents: {} {} us is out of range for a time", key, raw));
  return *ns;
}

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

std::uint64_t mix(std::uint64_t h, std::int64_t x) {
  h ^= static_cast<std::uint64_t>(x) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

/// A pid or tid: an integer, or a string (Kineto writes "Spans", "Traces" for its own rows).
std::int64_t id_of(od::value v) {
  od::json_type t;
  if (v.type().get(t)) return -1;
  if (t == od::json_type::number) return integer(v);
  if (t == od::json_type::string) {
    const auto s = str(v);
    return -static_cast<std::int64_t>(std::hash<std::string_view>{}(s) >> 2) - 2;
  }
  return -1;
}

class Reader {
 public:
  Reader(KinetoTrace& t, std::string_view first_value) : t_(t), first_value_(first_value) {}

  void read(od::document& doc) {
    od::object root;
    od::json_type type;
    if (auto e = doc.type().get(type)) throw e;
    if (type == od::json_type::array) fail(t_.file, "JSON of another shape: a top-level list; a Kineto trace is an object with a traceEvents list");
    if (type != od::json_type::object) {
      // simdjson types a document by its first character ('t' reads as true): check the value parses.
      bool valid = false;
      switch (type) {
        case od::json_type::boolean: valid = !doc.get_bool().error(); break;
        case od::json_type::number: valid = !doc.get_double().error(); break;
        case od::json_type::string: valid = !doc.get_string().error(); break;
        case od::json_type::null: valid = first_value_.substr(0, 4) == "null"; break;
        default: break;
      }
      fail(t_.file, valid ? "JSON of another shape: a single value; a Kineto trace is an object with a traceEvents list"
                          : "not valid JSON (it does not start with an object, a list or a value)");
    }
    if (auto e = doc.get_object().get(root)) throw e;
    bool saw_events = false;
    for (auto field : root) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) throw e;
      od::value value;
      if (auto e = field.value().get(value)) throw e;
      if (key == "traceEvents") {
        od::array events;
        if (value.get_array().get(events)) fail(t_.file, "JSON of another shape: traceEvents is not a list");
        saw_events = true;
        for (auto item : events) {
          od::value ev;
          if (auto e = item.get(ev)) throw e;
          event(ev);
        }
      } else if (key == "deviceProperties") {
        device_properties(value);
      } else if (key == "distributedInfo") {
        distributed_info(value);
      }
    }
    if (!saw_events) fail(t_.file, "JSON of another shape: no traceEvents list (not a Chrome / Kineto trace)");
  }

 private:
  std::uint32_t intern(std::string_view s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(t_.strings.size());
    t_.strings.emplace_back(s);
    ids_.emplace(std::string(s), id);
    return id;
  }

  std::uint32_t thread(std::int64_t pid, std::int64_t tid) {
    auto [it, fresh] = threads_.try_emplace({pid, tid}, static_cast<std::uint32_t>(threads_.size()));
    (void)fresh;
    return it->second;
  }

  void device_properties(od::value v) {
    od::array list;
    if (v.get_array().get(list)) return;
    for (auto item : list) {
      od::object o;
      if (item.get_object().get(o)) continue;
      DeviceInfo d;
      for (auto f : o) {
        std::string_view k;
        od::value x;
        if (f.unescaped_key().get(k) || f.value().get(x)) continue;
        if (k == "id") d.id = small_integer(x, t_.file, "deviceProperties.id");
        else if (k == "name") d.name = std::string(str(x));
        else if (k == "numSms") d.sms = small_integer(x, t_.file, "deviceProperties.numSms");
        else if (k == "totalGlobalMem") d.memory_bytes = number(x);
        else if (k == "computeMajor") d.compute_major = small_integer(x, t_.file, "deviceProperties.computeMajor");
        else if (k == "computeMinor") d.compute_minor = small_integer(x, t_.file, "deviceProperties.computeMinor");
        else if (k == "warpSize") d.warp_size = small_integer(x, t_.file, "deviceProperties.warpSize");
      }
      t_.devices.push_back(std::move(d));
    }
  }

  void distributed_info(od::value v) {
    od::object o;
    if (v.get_object().get(o)) return;
    for (auto f : o) {
      std::string_view k;
      od::value x;
      if (f.unescaped_key().get(k) || f.value().get(x)) continue;
      if (k == "rank") t_.rank = small_integer(x, t_.file, "distributedInfo.rank");
      else if (k == "world_size") t_.world_size = small_integer(x, t_.file, "distributedInfo.world_size");
      else if (k == "backend") t_.backend = std::string(str(x));
      else if (k == "nccl_version") t_.nccl_version = std::string(str(x));
      else if (k == "pg_config") {
        od::array groups;
        if (x.get_array().get(groups)) continue;
        for (auto g : groups) {
          od::object go;
          if (g.get_object().get(go)) continue;
          ProcessGroupInfo pg;
          for (auto gf : go) {
            std::string_view gk;
            od::value gx;
            if (gf.unescaped_key().get(gk) || gf.value().get(gx)) continue;
            if (gk == "pg_name") pg.name = std::string(str(gx));
            else if (gk == "pg_desc") pg.description = std::string(str(gx));
            else if (gk == "pg_size") pg.size = small_integer(gx, t_.file, "distributedInfo.pg_config.pg_size");
            else if (gk == "ranks") {
              od::array r;
              if (gx.get_array().get(r)) continue;
              for (auto rv : r) {
                std::int64_t rank;
                if (rv.get_int64().get(rank)) continue;
                if (rank < 0 || rank > std::numeric_limits<int>::max()) fail(t_.file, fmt::format("distributedInfo.pg_config.ranks: {} is out of range for a rank", rank));
                pg.ranks.push_back(static_cast<int>(rank));
              }
            }
          }
          t_.groups.push_back(std::move(pg));
        }
      }
    }
  }

  /// Everything an event's args may hold that calibration reads.
  struct Args {
    std::int64_t correlation = -1, external_id = -1, device = -1, stream = -1;
    double bytes = 0;
    std::uint64_t shape = 0;
    CommMetadata comm;
    bool has_comm = false;
    bool has_dims = false;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> dims;  ///< (offset into dims_, rank)
    std::vector<std::uint32_t> types;
  };

  void launch_dims(od::value v, std::uint64_t& h) {
    od::array a;
    if (v.get_array().get(a)) return;
    for (auto x : a) {
      std::int64_t i;
      if (!x.get_int64().get(i)) h = mix(h, i);
    }
  }

  void input_dims(od::value v, Args& a) {
    od::array list;
    if (v.get_array().get(list)) return;
    a.has_dims = true;
    for (auto item : list) {
      const auto offset = static_cast<std::uint32_t>(dims_.size());
      std::uint32_t rank = 0;
      od::array shape;
      od::value iv;
      if (!item.get(iv) && !iv.get_array().get(shape)) {
        for (auto d : shape) {
          std::int64_t x;
          if (d.get_int64().get(x)) x = -1;  // nested lists (TensorList) count as unknown dims
          dims_.push_back(x);
          ++rank;
        }
      }
      a.dims.emplace_back(offset, rank);
    }
  }

  void input_types(od::value v, Args& a) {
    od::array list;
    if (v.get_array().get(list)) return;
    for (auto item : list) {
      std::string_view s;
      od::value iv;
      if (item.get(iv) || iv.get_string().get(s)) s = "";
      a.types.push_back(intern(s));
    }
  }

  void args(od::value v, Args& a) {
    od::object o;
    if (v.get_object().get(o)) return;
    for (auto f : o) {
      std::string_view k;
      od::value x;
      if (f.unescaped_key().get(k) || f.value().get(x)) continue;
      if (k == "correlation") a.correlation = integer(x);
      else if (k == "External id") a.external_id = integer(x);
      else if (k == "device") a.device = integer(x);
      else if (k == "stream") a.stream = integer(x);
      else if (k == "bytes") a.bytes = number(x);
      else if (k == "grid" || k == "block") launch_dims(x, a.shape);
      else if (k == "Input Dims") input_dims(x, a);
      else if (k == "Input type") input_types(x, a);
      else if (k == "Collective name") {
        a.comm.collective = std::string(str(x));
        a.has_comm = true;
      } else if (k == "In msg nelems") a.comm.in_elements = integer(x);
      else if (k == "Out msg nelems") a.comm.out_elements = integer(x);
      else if (k == "Group size") a.comm.group_size = small_integer(x, t_.file, "args.Group size");
      else if (k == "dtype") a.comm.dtype = std::string(str(x));
    }
  }

  void event(od::value v) {
    ++t_.events;
    od::object o;
    if (v.get_object().get(o)) fail(t_.file, fmt::format("JSON of another shape: traceEvents entry {} is not an object", t_.events - 1));
    std::string_view ph, cat, name;
    std::int64_t pid = -1, tid = -1, ts = 0, dur = 0;
    Args a;
    dims_.clear();
    for (auto f : o) {
      std::string_view k;
      od::value x;
      if (auto e = f.unescaped_key().get(k)) throw e;
      if (auto e = f.value().get(x)) throw e;
      if (k == "ph") ph = str(x);
      else if (k == "cat") cat = str(x);
      else if (k == "name") name = str(x);
      else if (k == "pid") pid = id_of(x);
      else if (k == "tid") tid = id_of(x);
      else if (k == "ts") ts = time_ns(x, t_.file, "ts");
      else if (k == "dur") dur = time_ns(x, t_.file, "dur");
      else if (k == "args") args(x, a);
    }
    if (ph != "X") return;
    if (cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      GpuEvent g;
      g.klass = cat == "gpu_memcpy" ? KernelClass::memcpy : cat == "gpu_memset" ? KernelClass::memset : classify_kernel(name);
      g.name = intern(name);
      const std::int64_t device = a.device >= 0 ? a.device : pid;
      if (device < std::numeric_limits<int>::min() || device > std::numeric_limits<int>::max()) {
        fail(t_.file, fmt::format("a kernel's device (args.device, else pid): {} is out of range for a device", device));
      }
      g.device = static_cast<int>(device);
      g.stream = a.stream >= 0 ? a.stream : tid;
      g.start_ns = ts;
      g.dur_ns = dur;
      g.correlation = a.correlation;
      g.external_id = a.external_id;
      g.bytes = a.bytes;
      g.launch_shape = a.shape;
      if (a.has_comm) {
        g.comm = static_cast<std::int32_t>(t_.comm.size());
        t_.comm.push_back(std::move(a.comm));
      }
      t_.gpu.push_back(g);
    } else if (cat == "cpu_op" || cat == "user_annotation") {
      HostOp op;
      op.name = intern(name);
      op.thread = thread(pid, tid);
      op.start_ns = ts;
      op.dur_ns = dur;
      op.external_id = a.external_id;
      op.has_dims = a.has_dims;
      op.inputs_offset = static_cast<std::uint32_t>(t_.inputs.size());
      for (std::size_t i = 0; i < a.dims.size(); ++i) {
        HostInput in;
        in.dims_offset = static_cast<std::uint32_t>(t_.dims.size());
        in.rank = a.dims[i].second;
        t_.dims.insert(t_.dims.end(), dims_.begin() + a.dims[i].first, dims_.begin() + a.dims[i].first + a.dims[i].second);
        in.dtype = i < a.types.size() ? a.types[i] : intern("");
        t_.inputs.push_back(in);
      }
      op.inputs = static_cast<std::uint32_t>(a.dims.size());
      if (a.has_comm) {
        op.comm = static_cast<std::int32_t>(t_.comm.size());
        t_.comm.push_back(std::move(a.comm));
      }
      t_.ops.push_back(op);
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (name.substr(0, 3) == "hip") hip_calls_ = true;
      if (a.correlation >= 0) t_.launches.push_back({a.correlation, thread(pid, tid), ts});
    }
  }

 public:
  bool hip_calls_ = false;

 private:
  KinetoTrace& t_;
  std::string_view first_value_;  ///< the text from the first non-blank character
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> ids_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> threads_;
  std::vector<std::int64_t> dims_;  ///< the current event's Input Dims
};

bool is_amd(const DeviceInfo& d) {
  for (std::string_view marker : {"AMD", "Radeon", "Instinct"}) {
    if (d.name.find(marker) != std::string::npos) return true;
  }
  return false;
}

KinetoTrace parse_padded(const PaddedText& text, const std::string& file, std::uint64_t file_bytes) {
  KinetoTrace t;
  t.file = file;
  t.file_bytes = file_bytes;
  t.json_bytes = text.size;
  const auto first = std::find_if(text.view().begin(), text.view().end(), [](char c) { return c != ' ' && c != '\n' && c != '\r' && c != '\t'; });
  if (first == text.view().end()) fail(file, "empty: the file holds no JSON");
  od::parser parser;
  Reader reader(t, std::string_view(&*first, static_cast<std::size_t>(text.view().end() - first)));
  try {
    od::document doc;
    if (auto e = parser.iterate(simdjson::padded_string_view(text.data.get(), text.size, text.capacity)).get(doc)) throw e;
    reader.read(doc);
  } catch (simdjson::error_code e) {
    fail(file, malformed(e));
  } catch (const simdjson::simdjson_error& e) {
    fail(file, malformed(e.error()));
  }
  if (reader.hip_calls_ || std::any_of(t.devices.begin(), t.devices.end(), is_amd)) {
    const std::string device = t.devices.empty() ? std::string("hip runtime calls") : t.devices.front().name;
    fail(file, fmt::format("a ROCm trace ({}): calibrate from-trace reads NVIDIA CUDA traces only", device));
  }
  if (t.kernels() == 0) {
    fail(file, fmt::format("no GPU kernels in the trace ({} events; was it recorded with CUDA activities, not in CUPTI profiler-range mode?)",
                           t.events));
  }
  return t;
}

}  // namespace

std::size_t KinetoTrace::kernels() const {
  return static_cast<std::size_t>(std::count_if(gpu.begin(), gpu.end(), [](const GpuEvent& g) {
    return g.klass != KernelClass::memcpy && g.klass != KernelClass::memset;
  }));
}

std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text) {
  text = number_token(text);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (text.find_first_of("eE") != std::string_view::npos) {
    double d = 0;
    std::from_chars(text.data(), text.data() + text.size(), d);
    const double ns = d * 1000.0;
    // [-2^63, 2^63): where the rounding is defined.
    if (!(ns >= -9223372036854775808.0 && ns < 9223372036854775808.0)) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(ns));
  }
  bool negative = !text.empty() && text.front() == '-';
  if (negative) text.remove_prefix(1);
  const auto dot = text.find('.');
  std::int64_t whole = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + (dot == std::string_view::npos ? text.size() : dot), whole);
  // A thousand nanoseconds a microsecond, and the fraction's up to 1,000 more.
  if (parsed.ec == std::errc::result_out_of_range || whole > (kMax - 1000) / 1000) return std::nullopt;
  std::int64_t ns = whole * 1000;
  if (dot != std::string_view::npos) {
    std::int64_t scale = 100;
    for (std::size_t i = dot + 1; i < text.size() && scale > 0; ++i, scale /= 10) ns += (text[i] - '0') * scale;
    // Round on the fourth decimal (picoseconds would not change a nanosecond clock's reading).
    if (text.size() > dot + 4 && text[dot + 4] >= '5') ++ns;
  }
  return negative ? -ns : ns;
}

std::string gunzip(std::string_view data, const std::string& display_name) {
  PaddedText text;
  text.reserve(data.size() * 4);
  inflate_into(data, text, display_name);
  return std::string(text.view());
}

KinetoTrace parse_kineto_trace(std::string_view json, const std::string& display_name) {
  const PaddedText text = load_text(json, display_name);
  return parse_padded(text, display_name, json.size());
}

KinetoTrace read_kineto_trace(const std::filesystem::path& file) {
  const std::string shown = file.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) fail(shown, std::filesystem::exists(file, ec) ? "not a regular file" : "no such file");
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) fail(shown, "cannot read the file");
  if (size == 0) fail(shown, "empty: the file holds no JSON");
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(shown, "cannot open the file");
  // Read compressed files whole (they are a fraction of the text); read plain text straight into the padded buffer.
  PaddedText text;
  std::string raw;
  char magic[2] = {0, 0};
  in.read(magic, 2);
  in.seekg(0);
  if (is_gzip(std::string_view(magic, static_cast<std::size_t>(in.gcount() == 2 ? 2 : 0)))) {
    raw.resize(size);
    in.read(raw.data(), static_cast<std::streamsize>(size));
    if (static_cast<std::uint64_t>(in.gcount()) != size) fail(shown, "cannot read the file");
    text = load_text(raw, shown);
    std::string().swap(raw);
  } else {
    text.reserve(size);
    in.read(text.data.get(), static_cast<std::streamsize>(size));
    if (static_cast<std::uint64_t>(in.gcount()) != size) fail(shown, "cannot read the file");
    text.size = size;
    std::memset(text.data.get() + text.size, 0, simdjson::SIMDJSON_PADDING);
  }
  return parse_padded(text, shown, size);
}

}  // namespace parasim::calibrate
