// The translation unit that makes base/precompiled.h precompiled header (CMakeLists.txt).
