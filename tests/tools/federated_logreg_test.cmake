# cmake -DTOOL=<federated_logreg> -DOUT=<dir> -P federated_logreg_test.cmake
# The Wisconsin breast-cancer data shipped by Debian's python3-sklearn (569 rows, 30 features,
# target last) is converted to "label,features..." here, at test time — never committed — and
# Sk-RSGD-AR at epsilon 1.28, delta 1e-8 with 10 clients must stay within 3 accuracy points of
# the non-private federated model (002 reports a 1–3 % drop).
set(SOURCE /usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv)
if(NOT EXISTS ${SOURCE})
  message(FATAL_ERROR "${SOURCE} is missing: install python3-sklearn (scripts/setup.sh does)")
endif()
file(STRINGS ${SOURCE} lines)
list(POP_FRONT lines)  # "569,30,malignant,benign"
set(csv "")
foreach(line IN LISTS lines)
  string(REGEX MATCH "^(.*),([01])$" _ "${line}")
  string(APPEND csv "${CMAKE_MATCH_2},${CMAKE_MATCH_1}\n")
endforeach()
file(WRITE ${OUT}/breast_cancer.csv "${csv}")
execute_process(COMMAND ${TOOL} --data ${OUT}/breast_cancer.csv --clients 10 --epsilon 1.28
                        --delta 1e-8 --seed 1 --json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "federated_logreg failed: ${err}")
endif()
string(REGEX MATCH "\"federated\": ([0-9.]+)" _ "${out}")
set(federated ${CMAKE_MATCH_1})
string(REGEX MATCH "\"private\": ([0-9.]+)" _ "${out}")
set(private ${CMAKE_MATCH_1})
string(REGEX MATCH "\"central\": ([0-9.]+)" _ "${out}")
set(central ${CMAKE_MATCH_1})
execute_process(COMMAND /usr/bin/env awk -v f=${federated} -v p=${private} -v c=${central}
                "BEGIN { exit !(p >= f - 0.03 && c >= 0.9) }" RESULT_VARIABLE ok)
if(NOT ok EQUAL 0)
  message(FATAL_ERROR "private ${private} is more than 3 points below federated ${federated} "
                      "(or central ${central} < 0.9)")
endif()
