# Build step (cmake -P): fills the codec list into h5zarr-config. The list is the core's codec
# registry: the X(<name>) lines of zarr/codec_registry.c in their order, each the v3 name of class
# zarr__codec_<name> in zarr/codecs/*.c ("numcodecs." dropped), read each time a codec file changes.
#   -DREGISTRY_C=<zarr/codec_registry.c> -DCODECS_DIR=<zarr/codecs> -DIN=<h5zarr-config with
#   @H5ZARR_CODECS@ left> -DOUT=<h5zarr-config>
file(READ "${REGISTRY_C}" reg)
string(REGEX MATCHALL "\n    X\\([a-z0-9_]+\\)" entries "${reg}")
file(GLOB codec_files "${CODECS_DIR}/*.c")
set(classes "")
foreach(f IN LISTS codec_files)
  file(READ "${f}" src)
  string(REGEX MATCHALL "const zarr__codec_class zarr__codec_[a-z0-9_]+ = {[^;]*\\.v3name *= *\"[^\"]+\"" found
    "${src}")
  list(APPEND classes ${found})
endforeach()
set(names "")
foreach(e IN LISTS entries)
  string(REGEX REPLACE "^\n    X\\(([a-z0-9_]+)\\)$" "\\1" id "${e}")
  set(name "")
  foreach(c IN LISTS classes)
    if(c MATCHES "zarr__codec_${id} = {[^;]*\\.v3name *= *\"(numcodecs\\.)?([^\"]+)\"")
      set(name "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  if(name STREQUAL "")
    message(FATAL_ERROR "h5zarr-config: no class zarr__codec_${id} with a .v3name in ${CODECS_DIR}")
  endif()
  list(APPEND names "${name}")
endforeach()
list(LENGTH names n)
if(n LESS 4)
  message(FATAL_ERROR "h5zarr-config: found ${n} codecs in ${REGISTRY_C} (the registry changed shape?)")
endif()
list(JOIN names " " H5ZARR_CODECS)
configure_file("${IN}" "${OUT}" @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
  GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
