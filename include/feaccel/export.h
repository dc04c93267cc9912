/**
 * @file export.h
 * @brief Symbol visibility and attribute macros shared by every public header.
 *
 * libfeaccel is built with hidden visibility: only declarations marked
 * FEA_EXPORT are part of the ABI, and lib/libfeaccel.map lists exactly them.
 */
#ifndef FEACCEL_EXPORT_H
#define FEACCEL_EXPORT_H

/** Marks the functions the library exports: its ABI (default visibility, or
 * dllexport / dllimport on Windows).
 * @since 0.1.0 */
#if defined(_WIN32)
#if defined(FEA_BUILDING_LIBRARY)
#define FEA_EXPORT __declspec(dllexport)
#else
#define FEA_EXPORT __declspec(dllimport)
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define FEA_EXPORT __attribute__((visibility("default")))
#else
#define FEA_EXPORT
#endif

/** Marks functions whose status must not be ignored. @since 0.1.0 */
#if defined(__GNUC__) || defined(__clang__)
#define FEA_NODISCARD __attribute__((warn_unused_result))
#else
#define FEA_NODISCARD
#endif

/** Public functions that return a status: exported and warn-unused-result.
 * The destroy functions and fea_version(), which cannot fail, are plain
 * FEA_EXPORT: GCC's warn_unused_result cannot be silenced by a (void) cast,
 * so the attribute on them would break -Werror builds that call them on
 * cleanup paths. tests/abi/check-headers.py holds both sides of this.
 * @since 0.1.0 */
#define FEA_API FEA_EXPORT FEA_NODISCARD

/** 1 where the FEA_*_INIT macros expand to designated initializers (`.size = ...`): C99 and
 * later. 0 in C++ (designated initializers came in C++20, in declaration order only) and in
 * C90, where they are positional, with the same values.
 * @since 0.1.0 */
#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define FEA_DESIGNATED_INITIALIZERS 1
#else
#define FEA_DESIGNATED_INITIALIZERS 0
#endif

/** @def FEA_BEGIN_DECLS
 * Opens a header's declarations: `extern "C" {` in C++, nothing in C.
 * @since 0.1.0 */
/** @def FEA_END_DECLS
 * Closes what FEA_BEGIN_DECLS opened.
 * @since 0.1.0 */
#ifdef __cplusplus
#define FEA_BEGIN_DECLS extern "C" {
#define FEA_END_DECLS }
#else
#define FEA_BEGIN_DECLS
#define FEA_END_DECLS
#endif

#endif /* FEACCEL_EXPORT_H */
