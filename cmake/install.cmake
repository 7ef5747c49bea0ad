# What `cmake --install` puts in a prefix, and what `pip install .` puts in a wheel.
#
# The C++ package: include/tilefuse/, lib/libtilefuse{,_runtime}.so, lib/tilefuse/ (the prebuilt
# kernel headers, found beside the library at run time), bin/tilefuse, and
# lib/cmake/tilefuse/ (tilefuseConfig.cmake, exporting tilefuse::tilefuse and tilefuse::runtime).
# The wheel (scikit-build-core sets SKBUILD): the extension and the prebuilt kernel headers, beside
# the package's .py files.
include(CMakePackageConfigHelpers)

if(SKBUILD)
  install(TARGETS tilefuse_python LIBRARY DESTINATION tilefuse COMPONENT python)  # the .py files: pyproject.toml
  install(DIRECTORY ${TF_PREBUILT_KERNEL_HEADERS}/include DESTINATION tilefuse/prebuilt-kernel-headers
          COMPONENT python OPTIONAL)
  return()
endif()

set(TF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tilefuse)
install(TARGETS tilefuse_runtime_shared tilefuse_shared EXPORT tilefuseTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS tilefuse RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/tilefuse DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${TF_PREBUILT_KERNEL_HEADERS}/include DESTINATION ${CMAKE_INSTALL_LIBDIR}/tilefuse/prebuilt-kernel-headers
        OPTIONAL)
install(EXPORT tilefuseTargets NAMESPACE tilefuse:: DESTINATION ${TF_CMAKE_DIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/tilefuseConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/tilefuseConfig.cmake INSTALL_DESTINATION ${TF_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tilefuseConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tilefuseConfig.cmake ${CMAKE_BINARY_DIR}/tilefuseConfigVersion.cmake
        DESTINATION ${TF_CMAKE_DIR})
