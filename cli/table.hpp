#pragma once
// Plain-text tables for the terminal: columns sized to their widest cell, numbers right-aligned.
#include <string>
#include <vector>

namespace parasim::cli {

class Table {
 public:
  enum class Align { left, right };
  explicit Table(std::vector<std::string> header, std::vector<Align> align = {});
  void add(std::vector<std::string> row);
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace parasim::cli
