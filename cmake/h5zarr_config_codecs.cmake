# Build step (cmake -P): fills the codec list into h5zarr-config. The list is the core's codec table,
# codec_infos[] in zarr/codec.c (v3 names, "numcodecs." dropped), read each time codec.c changes.
#   -DCODEC_C=<zarr/codec.c> -DIN=<h5zarr-config with @H5ZARR_CODECS@ left> -DOUT=<h5zarr-config>
file(READ "${CODEC_C}" src)
string(REGEX MATCH "codec_infos\\[\\] = {[^;]*};" table "${src}")
string(REGEX MATCHALL "{CODEC_[A-Z0-9_]+, \"[^\"]+\"" rows "${table}")
set(names "")
foreach(row IN LISTS rows)
  string(REGEX REPLACE "^{CODEC_[A-Z0-9_]+, \"(numcodecs\\.)?([^\"]+)\"$" "\\2" name "${row}")
  list(APPEND names "${name}")
endforeach()
list(LENGTH names n)
if(n LESS 4)
  message(FATAL_ERROR "h5zarr-config: found ${n} codecs in ${CODEC_C} (codec_infos[] changed shape?)")
endif()
list(JOIN names " " H5ZARR_CODECS)
configure_file("${IN}" "${OUT}" @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
  GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
