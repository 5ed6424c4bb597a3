# Install-time script: writes hwtag.pc from hwtag.pc.in with the prefix this install uses
# (`cmake --install --prefix`, else CMAKE_INSTALL_PREFIX); never run at configure time.
# Set by the install(CODE) rule: HWTAG_PC_IN, HWTAG_PC_OUT, HWTAG_LIBDIR, HWTAG_INCLUDEDIR,
# PROJECT_DESCRIPTION, PROJECT_VERSION, HWTAG_PC_LIBS_PRIVATE.
foreach(dir LIBDIR INCLUDEDIR)
  # as GNUInstallDirs: relative to the prefix unless already absolute
  cmake_path(APPEND CMAKE_INSTALL_PREFIX "${HWTAG_${dir}}" OUTPUT_VARIABLE CMAKE_INSTALL_FULL_${dir})
endforeach()
configure_file("${HWTAG_PC_IN}" "${HWTAG_PC_OUT}" @ONLY)
