# dqsgd::simde, which dqsgd::dqsgd links: the include directory of SIMDe (header-only; Debian
# libsimde-dev), so that dqsgd.h pulls in dqsgd_simd.h and its kernels; or, where SIMDe is
# missing or older than 0.7.2, DQ_NO_SIMD, the scalar reference (the same bytes, slower).
# Used by CMakeLists.txt and, installed, by dqsgdConfig.cmake, so the consumer's machine decides.
# SIMDe ships no CMake package: look for the header dqsgd.h tests with __has_include.
# DQSGD_SIMDE_INCLUDE_DIR (a cache entry) names the directory holding simde/ to use another copy.
if(NOT TARGET dqsgd::simde)
    find_path(DQSGD_SIMDE_INCLUDE_DIR NAMES simde/x86/avx512.h
              DOC "directory holding SIMDe's simde/ (0.7.2 or newer) for dqsgd's SIMD kernels")
    set(dqsgd_simde_version "")
    if(DQSGD_SIMDE_INCLUDE_DIR AND EXISTS "${DQSGD_SIMDE_INCLUDE_DIR}/simde/simde-common.h")
        file(STRINGS "${DQSGD_SIMDE_INCLUDE_DIR}/simde/simde-common.h" dqsgd_simde_lines
             REGEX "^#define SIMDE_VERSION_(MAJOR|MINOR|MICRO) +[0-9]+")
        foreach(part MAJOR MINOR MICRO)
            if(dqsgd_simde_lines MATCHES "SIMDE_VERSION_${part} +([0-9]+)")
                string(APPEND dqsgd_simde_version ".${CMAKE_MATCH_1}")
            endif()
        endforeach()
        string(REGEX REPLACE "^\\." "" dqsgd_simde_version "${dqsgd_simde_version}")
    endif()

    add_library(dqsgd::simde INTERFACE IMPORTED)
    include(FindPackageMessage)
    if(dqsgd_simde_version VERSION_GREATER_EQUAL 0.7.2)
        set_target_properties(dqsgd::simde PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${DQSGD_SIMDE_INCLUDE_DIR}")
        set(dqsgd_simde_note "dqsgd: SIMDe ${dqsgd_simde_version} in ${DQSGD_SIMDE_INCLUDE_DIR}: SIMD kernels for the ISA the compiler targets")
    else()
        set_target_properties(dqsgd::simde PROPERTIES INTERFACE_COMPILE_DEFINITIONS DQ_NO_SIMD)
        if(DQSGD_SIMDE_INCLUDE_DIR)
            if(NOT dqsgd_simde_version)
                set(dqsgd_simde_version "of unknown version")
            endif()
            set(dqsgd_simde_why "SIMDe ${dqsgd_simde_version} in ${DQSGD_SIMDE_INCLUDE_DIR}, not 0.7.2 or newer")
        else()
            set(dqsgd_simde_why "SIMDe not found (Debian: libsimde-dev; or set DQSGD_SIMDE_INCLUDE_DIR)")
        endif()
        set(dqsgd_simde_note "dqsgd: ${dqsgd_simde_why}: DQ_NO_SIMD, the scalar kernels only")
    endif()
    if(NOT dqsgd_FIND_QUIETLY) # printed again only when the outcome changes
        find_package_message(dqsgd_simde "${dqsgd_simde_note}" "[${DQSGD_SIMDE_INCLUDE_DIR}][${dqsgd_simde_version}]")
    endif()
endif()
