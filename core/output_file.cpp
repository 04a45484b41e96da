#include "core/output_file.hpp"

#include <array>
#include <filesystem>
#include <fstream>
#include <zlib.h>

#include "core/error.hpp"

namespace parasim {

// A stream buffer that deflates into a gzip file (zlib's gzip wrapper: windowBits 15 + 16).
class OutputFile::GzipBuffer : public std::streambuf {
 public:
  explicit GzipBuffer(const std::string& path) : file_(path, std::ios::binary) {
    z_.zalloc = Z_NULL;
    z_.zfree = Z_NULL;
    z_.opaque = Z_NULL;
    ok_ = file_.good() && deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    setp(in_.data(), in_.data() + in_.size());
  }
  ~GzipBuffer() override { deflateEnd(&z_); }
  bool opened() const { return ok_; }
  /// Compresses what is left and writes the trailer; false when anything failed.
  bool finish() {
    if (!ok_) return false;
    ok_ = deflate_out(Z_FINISH);
    file_.close();
    return ok_ && !file_.fail();
  }

 protected:
  int overflow(int c) override {
    if (!deflate_out(Z_NO_FLUSH)) return traits_type::eof();
    if (c != traits_type::eof()) {
      *pptr() = static_cast<char>(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return 0; }  // a gzip member is flushed whole by finish()

 private:
  bool deflate_out(int flush) {
    z_.next_in = reinterpret_cast<Bytef*>(pbase());
    z_.avail_in = static_cast<uInt>(pptr() - pbase());
    int status = Z_OK;
    do {
      z_.next_out = reinterpret_cast<Bytef*>(out_.data());
      z_.avail_out = static_cast<uInt>(out_.size());
      status = deflate(&z_, flush);
      if (status == Z_STREAM_ERROR) return false;
      file_.write(out_.data(), static_cast<std::streamsize>(out_.size() - z_.avail_out));
      if (!file_) return false;
    } while (z_.avail_out == 0 || (flush == Z_FINISH && status != Z_STREAM_END));
    setp(in_.data(), in_.data() + in_.size());
    return true;
  }

  std::ofstream file_;
  z_stream z_{};
  bool ok_ = false;
  std::array<char, 1 << 16> in_{}, out_{};
};

OutputFile::OutputFile(const std::string& path, const std::string& flag, const std::string& what)
    : path_(path), flag_(flag), what_(what), compressed_(path.size() > 3 && path.ends_with(".gz")) {
  if (compressed_) {
    auto gz = std::make_unique<GzipBuffer>(path);
    if (!gz->opened()) throw InputError({path, 0, 0}, flag, "cannot write " + what);
    buffer_ = std::move(gz);
    stream_ = std::make_unique<std::ostream>(buffer_.get());
  } else {
    auto file = std::make_unique<std::ofstream>(path, std::ios::binary);
    if (!*file) throw InputError({path, 0, 0}, flag, "cannot write " + what);
    stream_ = std::move(file);
  }
}

OutputFile::~OutputFile() = default;

std::ostream& OutputFile::stream() { return *stream_; }

void OutputFile::close() {
  bool ok = static_cast<bool>(*stream_);
  if (compressed_) {
    stream_->flush();
    ok = ok && static_cast<GzipBuffer*>(buffer_.get())->finish();
  } else {
    auto& file = static_cast<std::ofstream&>(*stream_);
    file.close();
    ok = ok && !file.fail();
  }
  if (!ok) throw InputError({path_, 0, 0}, flag_, "cannot write " + what_);
}

std::uintmax_t OutputFile::size() const {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path_, ec);
  return ec ? 0 : n;
}

}  // namespace parasim
