#pragma once
// What a GPU kernel does, from its name alone (profiler traces and CUPTI records carry nothing else
// that every library fills in). The rules, in order, first match wins, on the lower-cased name with the
// decoys "fbgemm" (a library, not a GEMM) and "convert" (a cast, not a convolution) taken out:
//   nccl         starts with "nccl" (ncclKernel_*, ncclDevKernel_*)
//   attention    contains flash, fmha, attention, attn, sdpa
//   convolution  contains conv, fprop, dgrad, wgrad, scudnn, winograd, implicit_gemm, fft2d, cudnn::cnn, cask_cudnn
//   gemm         contains gemm, gemv, splitkreduce, cublas, cutlass, triton_tem, cijk_, nvjet (cuBLAS's
//                Hopper kernels from CUDA 12.6 on: nvjet_sm90_tst_256x128_…, seen on an H100 with CUDA 13.0)
//   reduction    contains reduce, softmax, norm, bn_fw, bn_bw, welford, triton_red, triton_per
//   elementwise  contains elementwise, fillfunctor, copy, triton_poi, multi_tensor_apply, nchwtonhwc, nhwctonchw,
//                index, scatter, gather, transpose, catarray
//   other        everything else (embedding lookups, sorts, scans, …)
// Copies and memsets are not kernels; a trace marks them gpu_memcpy / gpu_memset, and so does CUPTI.
// tests/calibrate/kineto_count.py applies the same rules on its own, to check the importer's counts.
#include <array>
#include <string_view>

namespace parasim::calibrate {

enum class KernelClass : unsigned char { gemm, attention, convolution, elementwise, reduction, nccl, memcpy, memset, other };
inline constexpr std::array kAllKernelClasses{KernelClass::gemm,      KernelClass::attention, KernelClass::convolution,
                                              KernelClass::elementwise, KernelClass::reduction, KernelClass::nccl,
                                              KernelClass::memcpy,    KernelClass::memset,    KernelClass::other};
inline constexpr std::size_t kKernelClasses = kAllKernelClasses.size();

std::string_view kernel_class_name(KernelClass c);

/// The class of a kernel by its (demangled or mangled) name; never memcpy or memset.
KernelClass classify_kernel(std::string_view name);

}  // namespace parasim::calibrate
