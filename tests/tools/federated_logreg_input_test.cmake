# cmake -DTOOL=<federated_logreg> -DOUT=<dir> -P federated_logreg_input_test.cmake
# federated_logreg reads its CSV strictly (host_server/estimate/csv_fields.h) and refuses a
# column whose standardisation overflows: each bad file must fail with an error naming the file,
# the line and the field or column — never train on "0.5x" as 0.5, a hex float, a row with a
# trailing comma, or a 1e308 feature that would zero every standardised feature.
include(${CMAKE_CURRENT_LIST_DIR}/cli_helpers.cmake)
function(write_data name bad_line)
  set(csv "")
  foreach(i RANGE 1 20)
    math(EXPR label "${i} % 2")
    math(EXPR a "${i} * 3 % 7")
    math(EXPR b "${i} * 5 % 11")
    if(i EQUAL 4)
      string(APPEND csv "${bad_line}\n")
    else()
      string(APPEND csv "${label},0.${a},${b}.5\n")
    endif()
  endforeach()
  file(WRITE ${OUT}/${name}.csv "${csv}")
endfunction()

function(expect_refused name bad_line pattern)
  write_data(${name} "${bad_line}")
  expect_refusal("federated_logreg on '${bad_line}' (${name})" "${pattern}"
                 COMMAND ${TOOL} --data ${OUT}/${name}.csv --clients 2 --epsilon 1 --delta 1e-5
                         --batches 2 --epochs 2)
endfunction()

# The clean file trains (so the refusals below are about the bad line alone).
write_data(clean "1,0.25,3.5")
execute_process(COMMAND ${TOOL} --data ${OUT}/clean.csv --clients 2 --epsilon 1 --delta 1e-5
                        --batches 2 --epochs 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "federated_logreg refused a clean file: ${err}${out}")
endif()

expect_refused(trailing_text "1,0.5x,2" "trailing_text.csv:4: field 2: '0.5x' is not a decimal")
expect_refused(trailing_comma "1,0.5,2," "trailing_comma.csv:4: field 4: is empty")
expect_refused(hex_float "1,0x1p-1,2" "hex_float.csv:4: field 2: '0x1p-1' is a hex number")
expect_refused(not_finite "1,nan,2" "not_finite.csv:4: field 2: 'nan' is not a finite number")
expect_refused(huge_feature "1,1e308,2" "feature column 1 \\(CSV field 2\\)")
message(STATUS "federated_logreg: malformed data files are refused with file, line and field")

# Privacy parameters are checked where they enter, never passed on as NaN, inf or out of range.
set(defaults --epsilon 1 --delta 1e-5 --batches 2 --epochs 2)
foreach(option_value "--epsilon;nan" "--epsilon;-1" "--delta;1" "--delta;inf" "--gamma;0"
                     "--beta;0.4" "--bits;65" "--epochs;0" "--batches;1000")
  list(GET option_value 0 option)
  set(args ${defaults})
  list(FIND args ${option} at)
  if(at GREATER_EQUAL 0)  # replace the default's value
    math(EXPR value_at "${at} + 1")
    list(REMOVE_AT args ${value_at} ${at})
  endif()
  execute_process(COMMAND ${TOOL} --data ${OUT}/clean.csv --clients 2 ${args} ${option_value}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT err MATCHES "${option}: '")
    message(FATAL_ERROR "federated_logreg ${option_value}: exit ${rc}: ${err}${out}")
  endif()
endforeach()
message(STATUS "federated_logreg: privacy parameters outside their ranges are refused")
