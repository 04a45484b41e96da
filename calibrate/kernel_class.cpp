#include "calibrate/kernel_class.hpp"

#include <initializer_list>
#include <string>

namespace parasim::calibrate {
namespace {

struct Rule {
  KernelClass klass;
  std::initializer_list<std::string_view> patterns;
};

// The table of kernel_class.hpp, in order.
const Rule kRules[] = {
    {KernelClass::attention, {"flash", "fmha", "attention", "attn", "sdpa"}},
    {KernelClass::convolution, {"conv", "fprop", "dgrad", "wgrad", "scudnn", "winograd", "implicit_gemm", "fft2d", "cudnn::cnn", "cask_cudnn"}},
    {KernelClass::gemm, {"gemm", "gemv", "splitkreduce", "cublas", "cutlass", "triton_tem", "cijk_", "nvjet"}},
    {KernelClass::reduction, {"reduce", "softmax", "norm", "bn_fw", "bn_bw", "welford", "triton_red", "triton_per"}},
    {KernelClass::elementwise,
     {"elementwise", "fillfunctor", "copy", "triton_poi", "multi_tensor_apply", "nchwtonhwc", "nhwctonchw", "index", "scatter", "gather",
      "transpose", "catarray"}},
};

std::string lowered_without_decoys(std::string_view name) {
  std::string s(name);
  for (auto& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (std::string_view decoy : {"fbgemm", "convert"}) {
    for (auto at = s.find(decoy); at != std::string::npos; at = s.find(decoy, at)) s.erase(at, decoy.size());
  }
  return s;
}

}  // namespace

std::string_view kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::gemm: return "gemm";
    case KernelClass::attention: return "attention";
    case KernelClass::convolution: return "convolution";
    case KernelClass::elementwise: return "elementwise";
    case KernelClass::reduction: return "reduction";
    case KernelClass::nccl: return "nccl";
    case KernelClass::memcpy: return "memcpy";
    case KernelClass::memset: return "memset";
    case KernelClass::other: return "other";
  }
  return "";
}

KernelClass classify_kernel(std::string_view name) {
  const std::string s = lowered_without_decoys(name);
  if (s.rfind("nccl", 0) == 0) return KernelClass::nccl;
  for (const auto& rule : kRules) {
    for (auto p : rule.patterns) {
      if (s.find(p) != std::string::npos) return rule.klass;
    }
  }
  return KernelClass::other;
}

}  // namespace parasim::calibrate
