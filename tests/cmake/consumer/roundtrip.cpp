// roundtrip.cpp - roundtrip.c compiled as C++: dqsgd.h in a C++ translation unit, built
// through the same CMake target as the C program (tests/cmake/test_cmake.sh).
#include "roundtrip.c"
