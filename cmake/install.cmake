# SPDX-License-Identifier: GPL-2.0-or-later
# What `cmake --install` puts where (GNUInstallDirs), and the .deb (CPack).
# keventd and keventctl install themselves (keventd/CMakeLists.txt).
#
#   <prefix>/sbin/keventd, <prefix>/bin/keventctl
#   <prefix>/lib/keventd/rules.d/*.yaml        the vendor layer (rules.d/)
#   /etc/keventd/rules.d/                      the admin's layer, empty
#   <includedir>/kevent/kevent.h               the UAPI header, for listeners
#   <mandir>/man{5,8,9}/                       the man pages
#   <unitdir>/keventd.service                  the systemd unit
#   <datadir>/bash-completion/completions/keventctl
#   <datadir>/dbus-1/interfaces/org.kernel.Event.xml
#   <datadir>/dbus-1/system.d/org.kernel.Event1.conf   only root owns the name
#   <datadir>/pkgconfig/keventd.pc             where rule packs install, the header
# With KEVENT_DEB also the Debian layout: gzipped man pages, the copyright
# file and changelog in <datadir>/doc/keventd, and the module's source for
# DKMS in /usr/src/kevent-<version>/.

# systemd's unit directory: the distribution's for /usr (/lib/systemd/system
# on Debian 12), <prefix>/lib/systemd/system otherwise (systemd reads
# /usr/local/lib/systemd/system too).
if(NOT DEFINED KEVENT_SYSTEMD_UNITDIR)
  set(unitdir "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
  if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
    pkg_get_variable(sd_unitdir systemd systemdsystemunitdir)
    if(sd_unitdir)
      set(unitdir "${sd_unitdir}")
    else()
      set(unitdir "/lib/systemd/system")
    endif()
  endif()
  set(KEVENT_SYSTEMD_UNITDIR "${unitdir}")
endif()
set(KEVENT_CONF_DIR /etc/keventd) # fixed, whatever the prefix
set(KEVENT_ADMIN_RULES_DIR ${KEVENT_CONF_DIR}/rules.d)

# The version of the .deb and of the module's DKMS source: the project's,
# unless a test build of an upgrade asks for another (the system tests
# build a second package this way, see tests/system/README.md).
set(KEVENT_PACKAGE_VERSION "${PROJECT_VERSION}" CACHE STRING
    "Version of the .deb and of the DKMS module (default: the project's)")
if(KEVENT_PACKAGE_VERSION STREQUAL "")
  set(KEVENT_PACKAGE_VERSION "${PROJECT_VERSION}")
endif()

# keventd.pc: for packagers of rule packs, as udev.pc is for udev rules:
#   pkg-config --variable=rulesdir keventd   the vendor rule directory
#   pkg-config --variable=confdir keventd    the admin's configuration
configure_file(${CMAKE_SOURCE_DIR}/packaging/keventd.pc.in ${CMAKE_BINARY_DIR}/keventd.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/keventd.pc DESTINATION ${CMAKE_INSTALL_DATADIR}/pkgconfig)

configure_file(${CMAKE_SOURCE_DIR}/keventd/keventd.service.in
               ${CMAKE_BINARY_DIR}/keventd.service @ONLY)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/rules.d/
        DESTINATION ${KEVENT_VENDOR_RULES_SUBDIR}
        FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                              GROUP_EXECUTE WORLD_READ WORLD_EXECUTE
        FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY DESTINATION ${KEVENT_ADMIN_RULES_DIR}
        DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
                              GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
# Not <includedir>/linux: that directory is the kernel's (linux-libc-dev).
install(FILES ${CMAKE_SOURCE_DIR}/kernel/include/uapi/linux/kevent.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/kevent)
install(FILES ${CMAKE_BINARY_DIR}/keventd.service DESTINATION ${KEVENT_SYSTEMD_UNITDIR})
install(FILES ${CMAKE_SOURCE_DIR}/docs/org.kernel.Event.xml # keventd --dbus's interface
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dbus-1/interfaces)
# The bus policy for keventd --dbus's name (the system bus reads
# /usr/share/dbus-1/system.d; with another prefix, link it into
# /etc/dbus-1/system.d).
install(FILES ${CMAKE_SOURCE_DIR}/keventd/org.kernel.Event1.conf
        DESTINATION ${CMAKE_INSTALL_DATADIR}/dbus-1/system.d)
install(FILES ${CMAKE_SOURCE_DIR}/keventd/keventctl.bash-completion
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME keventctl)

set(KEVENT_MAN_PAGES keventd.8 keventctl.8 keventd.rules.5 keventd.yaml.5 send_kevent.9)
set(man_outputs)
foreach(page ${KEVENT_MAN_PAGES})
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
  if(KEVENT_DEB) # Debian policy 12.1: compressed with gzip -9n
    set(gz ${CMAKE_BINARY_DIR}/man/${page}.gz)
    add_custom_command(OUTPUT ${gz}
                       COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
                       COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/docs/${page} > ${gz}
                       DEPENDS ${CMAKE_SOURCE_DIR}/docs/${page} VERBATIM)
    list(APPEND man_outputs ${gz})
    install(FILES ${gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  else()
    install(FILES ${CMAKE_SOURCE_DIR}/docs/${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  endif()
endforeach()

if(KEVENT_DEB)
  add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/changelog.Debian.gz
                     COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/packaging/changelog.Debian
                             > ${CMAKE_BINARY_DIR}/changelog.Debian.gz
                     DEPENDS ${CMAKE_SOURCE_DIR}/packaging/changelog.Debian VERBATIM)
  list(APPEND man_outputs ${CMAKE_BINARY_DIR}/changelog.Debian.gz)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright ${CMAKE_BINARY_DIR}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/keventd)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/lintian-overrides
          DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME keventd)
  # As dh_strip does: crt*.o bring a .comment section -fno-ident cannot drop.
  find_program(KEVENT_OBJCOPY NAMES objcopy REQUIRED)
  foreach(prog ${CMAKE_INSTALL_FULL_SBINDIR}/keventd ${CMAKE_INSTALL_FULL_BINDIR}/keventctl)
    install(CODE "execute_process(COMMAND ${KEVENT_OBJCOPY} --remove-section=.comment
                                          \"\$ENV{DESTDIR}${prog}\" COMMAND_ERROR_IS_FATAL ANY)")
  endforeach()
  # The module's source for DKMS (kernel/dkms.conf names PACKAGE_NAME kevent),
  # its PACKAGE_VERSION the package's.
  set(dkms_dir /usr/src/kevent-${KEVENT_PACKAGE_VERSION})
  file(READ ${CMAKE_SOURCE_DIR}/kernel/dkms.conf dkms_conf)
  string(REGEX REPLACE "PACKAGE_VERSION=\"[^\"]*\"" "PACKAGE_VERSION=\"${KEVENT_PACKAGE_VERSION}\""
         dkms_conf "${dkms_conf}")
  file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/packaging/dkms.conf CONTENT "${dkms_conf}" @ONLY)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/kernel/dkms.conf)
  install(FILES ${CMAKE_SOURCE_DIR}/kernel/Kbuild ${CMAKE_SOURCE_DIR}/kernel/Kconfig
                ${CMAKE_SOURCE_DIR}/kernel/Makefile ${CMAKE_BINARY_DIR}/packaging/dkms.conf
                ${CMAKE_SOURCE_DIR}/kernel/kevent_bridges.c
                ${CMAKE_SOURCE_DIR}/kernel/kevent_core.c
                ${CMAKE_SOURCE_DIR}/kernel/kevent_debugfs.c
                ${CMAKE_SOURCE_DIR}/kernel/kevent_internal.h
          DESTINATION ${dkms_dir})
  install(PROGRAMS ${CMAKE_SOURCE_DIR}/kernel/dkms-post-build.sh DESTINATION ${dkms_dir})
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/kernel/include DESTINATION ${dkms_dir}
          FILES_MATCHING PATTERN "*.h")
endif()
if(man_outputs)
  add_custom_target(install-data ALL DEPENDS ${man_outputs})
endif()

# The .deb: cpack -G DEB in a tree configured with -DCMAKE_INSTALL_PREFIX=/usr
# -DKEVENT_DEB=ON (tests/packaging/build-deb.sh does that).  CPack rather
# than debian/: the package is made from the same install rules the DESTDIR
# test checks, in seconds, with no debhelper; see docs/packaging.md.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME keventd)
set(CPACK_PACKAGE_VENDOR "keventd maintainers")
set(CPACK_PACKAGE_CONTACT "keventd maintainers <maintainers@users.noreply.a-seed-48a12240.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "kernel event dispatcher")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "keventd receives events from the kernel (the kevent Generic Netlink family,\n\
uevents through udev, thermal trip points) and from admins, matches them\n\
against YAML rules, and runs the handler programs the rules name, with the\n\
event in their environment, as /sbin/hotplug once did.\n\
.\n\
This package ships the daemon, keventctl, the default rules, the systemd\n\
unit, and the kevent kernel module's source, built through DKMS.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.org/keventd")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "dkms")
# dlopen()ed when keventd.yaml configures a broker (keventd.yaml(5))
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libmosquitto1")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
foreach(script postinst prerm)
  configure_file(${CMAKE_SOURCE_DIR}/packaging/${script}.in
                 ${CMAKE_BINARY_DIR}/packaging/${script} @ONLY)
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_BINARY_DIR}/packaging/postinst ${CMAKE_BINARY_DIR}/packaging/prerm
    ${CMAKE_SOURCE_DIR}/packaging/postrm)
set(CPACK_STRIP_FILES ON)
set(CPACK_SET_DESTDIR ON) # /etc and /lib/systemd are absolute destinations
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_PACKAGE_VERSION ${KEVENT_PACKAGE_VERSION})
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
include(CPack)
