#include "planner/whatif_study.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

namespace parasim::planner {
namespace {

using yaml::Field;
using yaml::FieldType;

constexpr Field kAxisFields[] = {
    {.name = "key", .type = FieldType::string, .description = "scenario key path to vary, as --set names it (cluster.node.nics.bandwidth)", .required = true},
    {.name = "values", .type = FieldType::string_list, .description = "the values it takes, as --set would write them (400 Gb/s, ../nodes/dgx-b200.yaml)", .required = true},
};
const yaml::Schema kAxisSchema{"vary", "One varied key and its values.", kAxisFields};

constexpr Field kStudyFields[] = {
    {.name = "name", .type = FieldType::string, .description = "study name; default: the file name"},
    {.name = "description", .type = FieldType::string, .description = "free text: the question the study answers"},
    {.name = "scenario", .type = FieldType::string, .description = "the scenario file, relative to the study file", .required = true},
    {.name = "set", .type = FieldType::string_list, .description = "key.path=value overrides applied to every variant", .default_text = "[]"},
    {.name = "vary", .type = FieldType::section_list, .description = "the varied keys; variants are every combination, the first key changing slowest", .required = true, .schema = &kAxisSchema},
    {.name = "fixed_plan", .type = FieldType::boolean, .description = "simulate the scenario's plan instead of re-planning each variant", .default_text = "false"},
};

bool is_file_value(const std::string& value) {
  for (const char* ext : {".yaml", ".yml", ".json"}) {
    if (value.ends_with(ext)) return true;
  }
  return false;
}

// A relative file value in a study file names a file beside the study; --set resolves values
// against the working directory, so it is handed on as that file's path.
std::string resolve_beside(const std::filesystem::path& base_dir, const std::string& value) {
  if (base_dir.empty() || !is_file_value(value) || !std::filesystem::path(value).is_relative()) return value;
  const auto beside = (base_dir / value).lexically_normal();
  std::error_code ec;
  return std::filesystem::is_regular_file(beside, ec) ? beside.string() : value;
}

}  // namespace

const yaml::Schema kStudySchema{"study", "A what-if study: a scenario and the keys to vary (parasim whatif STUDY.yaml).", kStudyFields};

VaryAxis parse_vary(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError({"--vary", 0, 0}, {}, fmt::format("'{}' is not of the form key.path=value1,value2,...", text));
  }
  VaryAxis axis;
  axis.key = text.substr(0, eq);
  // Split at commas at depth 0: a YAML flow list or map, or a quoted string, stays one value.
  std::string current;
  int depth = 0;
  char quote = 0;
  auto flush = [&] {
    if (current.empty()) throw InputError({"--vary", 0, 0}, axis.key, fmt::format("empty value in '{}'", text.substr(eq + 1)));
    axis.values.push_back(current);
    current.clear();
  };
  for (const char c : text.substr(eq + 1)) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      flush();
      continue;
    }
    current += c;
  }
  flush();
  return axis;
}

std::vector<Variant> variant_grid(const std::vector<VaryAxis>& axes) {
  std::vector<Variant> grid{Variant{}};
  for (const auto& axis : axes) {
    std::vector<Variant> next;
    for (const auto& v : grid) {
      for (const auto& value : axis.values) {
        auto w = v;
        w.values.push_back(value);
        next.push_back(std::move(w));
      }
    }
    grid = std::move(next);
  }
  return grid;
}

std::string value_label(const std::string& value) {
  return is_file_value(value) ? std::filesystem::path(value).stem().string() : value;
}

std::vector<std::string> Study::overrides(const Variant& variant) const {
  std::vector<std::string> out = set;
  for (std::size_t i = 0; i < axes.size(); ++i) out.push_back(axes[i].key + "=" + resolve_beside(base_dir, variant.values.at(i)));
  return out;
}

bool is_study_file(const std::filesystem::path& file) {
  try {
    const auto root = YAML::LoadFile(file.string());
    return root.IsMap() && root["vary"];
  } catch (const YAML::Exception&) {
    return false;  // not readable as YAML: loading it as a scenario reports why
  }
}

Study load_study(const std::filesystem::path& file) {
  const yaml::Record r(yaml::load_file(file), kStudySchema);
  Study s;
  s.name = r.has("name") ? r.string("name") : file.stem().string();
  s.description = r.has("description") ? r.string("description") : "";
  s.base_dir = file.parent_path();
  s.scenario = (s.base_dir / r.string("scenario")).lexically_normal();
  for (const auto& assignment : r.strings("set")) {
    const auto eq = assignment.find('=');
    s.set.push_back(eq == std::string::npos ? assignment : assignment.substr(0, eq + 1) + resolve_beside(s.base_dir, assignment.substr(eq + 1)));
  }
  s.fixed_plan = r.boolean("fixed_plan");
  const auto& axes = r.sections("vary");
  if (axes.empty()) r.fail("vary", "needs at least one key to vary");
  for (std::size_t i = 0; i < axes.size(); ++i) {
    VaryAxis axis;
    axis.key = axes[i].string("key");
    axis.values = axes[i].strings("values");
    axis.origin = axes[i].location("key");
    if (axis.values.empty()) axes[i].fail("values", "needs at least one value");
    for (const auto& other : s.axes) {
      if (other.key == axis.key) axes[i].fail("key", fmt::format("'{}' is varied twice", axis.key));
    }
    s.axes.push_back(std::move(axis));
  }
  return s;
}

}  // namespace parasim::planner
