#include "core/bundled_files.hpp"

#include <algorithm>

namespace parasim {

BundledLookup find_bundled_file(const std::filesystem::path& dir, const std::string& name) {
  BundledLookup out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".yaml") continue;
    const std::string stem = e.path().stem().string();
    if (stem == name) out.file = e.path();
    if (stem.rfind(name + "-", 0) == 0) out.matches.push_back(stem);
    out.names.push_back(stem);
  }
  std::sort(out.names.begin(), out.names.end());
  std::sort(out.matches.begin(), out.matches.end());
  if (!out.file && out.matches.size() == 1) out.file = dir / (out.matches.front() + ".yaml");
  return out;
}

}  // namespace parasim
