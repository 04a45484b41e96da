#pragma once
// A file written through an std::ostream, gzip-compressed (zlib) when its name ends in ".gz", whose
// failure to open or to be written (a full disk shows only when buffers are flushed) is an error at
// close. What commands write large outputs through (simulate --trace).
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

namespace parasim {

class OutputFile {
 public:
  /// Throws InputError at `flag` ("cannot write <what>") when the file cannot be opened.
  OutputFile(const std::string& path, const std::string& flag, const std::string& what);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  /// Flushes and closes; throws InputError when anything could not be written.
  void close();
  /// Bytes on disk (after close): compressed where the file is.
  std::uintmax_t size() const;
  bool compressed() const { return compressed_; }

 private:
  class GzipBuffer;
  std::string path_, flag_, what_;
  bool compressed_ = false;
  std::unique_ptr<std::streambuf> buffer_;
  std::unique_ptr<std::ostream> stream_;
};

}  // namespace parasim
