# cmake -DTOOL=<fedstat-ca> -DOUT=<scratch dir> -P ca_cli_test.cmake
# fedstat-ca: init (seeded keys reproducible, files never replaced without --force), issue (one
# verified line a device, keys a function of seed and id), sign (a device's own key certified,
# checked by verify --certificate), verify (every line), and each command's refusals with the
# reason on stderr: bad hex, wrong lengths, ids 0 and above 2^31, an off-curve key, another kind
# of file, another CA, a changed id, a mismatched private key, a repeated id.
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})

# Runs the tool; expects exit `want` and, when given, stderr+stdout matching `pattern`.
function(expect want pattern)
  execute_process(COMMAND ${TOOL} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL want)
    message(FATAL_ERROR "fedstat-ca ${ARGN}: exit ${rc}, want ${want}: ${err}${out}")
  endif()
  if(NOT pattern STREQUAL "" AND NOT "${err}${out}" MATCHES "${pattern}")
    message(FATAL_ERROR "fedstat-ca ${ARGN}: output does not match '${pattern}': ${err}${out}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

# ---- init -----------------------------------------------------------------------------------
expect(0 "" init --out-key ${OUT}/ca.key --out-public ${OUT}/ca.pub --seed 1)
expect(0 "" init --out-key ${OUT}/ca2.key --out-public ${OUT}/ca2.pub --seed 1)
file(READ ${OUT}/ca.pub pub1)
file(READ ${OUT}/ca2.pub pub2)
if(NOT pub1 STREQUAL pub2 OR NOT pub1 MATCHES "^fedstat-ca public key v1\n04[0-9a-f]+\n$")
  message(FATAL_ERROR "init --seed 1 twice gave different or malformed public keys: ${pub1} ${pub2}")
endif()
expect(1 "already exists" init --out-key ${OUT}/ca.key --out-public ${OUT}/x.pub --seed 2)
file(READ ${OUT}/ca.pub pub_after)
if(NOT pub_after STREQUAL pub1)
  message(FATAL_ERROR "a refused init changed ca.pub")
endif()
expect(0 "" init --out-key ${OUT}/other.key --out-public ${OUT}/other.pub)  # the CSPRNG
expect(0 "" init --out-key ${OUT}/ca2.key --out-public ${OUT}/ca2.pub --force)
file(READ ${OUT}/ca2.pub pub_random)
if(pub_random STREQUAL pub1)
  message(FATAL_ERROR "init without --seed gave the seeded key")
endif()
expect(2 "--seed" init --out-key ${OUT}/y.key --out-public ${OUT}/y.pub --seed -1)

# ---- issue ----------------------------------------------------------------------------------
expect(0 "5 credentials" issue --ca-key ${OUT}/ca.key --first-id 1 --count 5 --seed 7
       --out ${OUT}/fleet.creds)
expect(0 "" issue --ca-key ${OUT}/ca.key --first-id 3 --count 5 --seed 7 --out ${OUT}/later.creds)
file(STRINGS ${OUT}/fleet.creds fleet REGEX "^[0-9]")
file(STRINGS ${OUT}/later.creds later REGEX "^[0-9]")
list(LENGTH fleet n)
if(NOT n EQUAL 5)
  message(FATAL_ERROR "issue --count 5 wrote ${n} lines")
endif()
list(GET fleet 2 id3_first)
list(GET later 0 id3_later)
if(NOT id3_first STREQUAL id3_later OR NOT id3_first MATCHES "^3 [0-9a-f]+ 04[0-9a-f]+ [0-9a-f]+$")
  message(FATAL_ERROR "device 3's line depends on more than (seed, id): ${id3_first} / ${id3_later}")
endif()
expect(0 "5 credentials verify" verify --ca-public ${OUT}/ca.pub --creds ${OUT}/fleet.creds)
expect(0 "5 credentials verify" verify --ca-public ${OUT}/ca.key --creds ${OUT}/fleet.creds)

expect(2 "first-id" issue --ca-key ${OUT}/ca.key --first-id 0 --count 1 --seed 1 --out ${OUT}/z)
expect(1 "2\\^31" issue --ca-key ${OUT}/ca.key --first-id 2147483648 --count 2 --seed 1
       --out ${OUT}/z)
expect(2 "count" issue --ca-key ${OUT}/ca.key --first-id 1 --count 0 --out ${OUT}/z)
expect(1 "not a CA private key file.*CA public key file" issue --ca-key ${OUT}/ca.pub
       --first-id 1 --count 1 --out ${OUT}/z)
expect(1 "already exists" issue --ca-key ${OUT}/ca.key --first-id 1 --count 1 --seed 1
       --out ${OUT}/fleet.creds)
if(EXISTS ${OUT}/z)
  message(FATAL_ERROR "a refused issue left a file behind")
endif()

# ---- sign (a device's own key) and verify --certificate ------------------------------------
string(REPLACE " " ";" fields "${id3_first}")
list(GET fields 2 device_key)
expect(0 "^42 ${device_key} [0-9a-f]+\n$" sign --ca-key ${OUT}/ca.key --id 42
       --public-key ${device_key})
string(STRIP "${last_out}" certificate)
expect(0 "client 42 verifies" verify --ca-public ${OUT}/ca.pub --certificate "${certificate}")
expect(1 "does not verify" verify --ca-public ${OUT}/other.pub --certificate "${certificate}")
string(REGEX REPLACE "^42 " "43 " changed_id "${certificate}")
expect(1 "does not verify" verify --ca-public ${OUT}/ca.pub --certificate "${changed_id}")

expect(1 "not hex" sign --ca-key ${OUT}/ca.key --id 42 --public-key zz${device_key})
string(SUBSTRING "${device_key}" 0 128 short_key)
expect(1 "64 bytes.*65" sign --ca-key ${OUT}/ca.key --id 42 --public-key ${short_key})
# Y's last hex digit changed: the point leaves the curve.
string(SUBSTRING "${device_key}" 0 129 key_head)
string(SUBSTRING "${device_key}" 129 1 last_digit)
if(last_digit STREQUAL "0")
  set(other_digit 1)
else()
  set(other_digit 0)
endif()
expect(1 "not a point on the curve" sign --ca-key ${OUT}/ca.key --id 42
       --public-key ${key_head}${other_digit})
string(SUBSTRING "${device_key}" 2 64 x_only)
expect(1 "33 bytes" sign --ca-key ${OUT}/ca.key --id 42 --public-key 02${x_only})
expect(2 "--id" sign --ca-key ${OUT}/ca.key --id 0 --public-key ${device_key})
expect(2 "--id" sign --ca-key ${OUT}/ca.key --id 2147483649 --public-key ${device_key})
expect(0 "^2147483648 " sign --ca-key ${OUT}/ca.key --id 2147483648 --public-key ${device_key})

# ---- verify: every line is checked ----------------------------------------------------------
expect(1 "does not verify" verify --ca-public ${OUT}/other.pub --creds ${OUT}/fleet.creds)
expect(1 "not a CA public key file" verify --ca-public ${OUT}/fleet.creds --creds ${OUT}/fleet.creds)
expect(1 "not a fleet credentials file" verify --ca-public ${OUT}/ca.pub --creds ${OUT}/ca.pub)
file(READ ${OUT}/fleet.creds text)
# A changed id on line 4 (device 2 claims to be 9).
string(REGEX REPLACE "\n2 " "\n9 " changed "${text}")
file(WRITE ${OUT}/changed.creds "${changed}")
expect(1 "changed.creds:4: .*does not verify" verify --ca-public ${OUT}/ca.pub
       --creds ${OUT}/changed.creds)
# Device 1's private key swapped for device 2's.
list(GET fleet 0 line1)
list(GET fleet 1 line2)
string(REPLACE " " ";" f1 "${line1}")
string(REPLACE " " ";" f2 "${line2}")
list(GET f1 1 key1)
list(GET f2 1 key2)
string(REPLACE "${key1}" "${key2}" swapped "${line1}")
file(WRITE ${OUT}/swapped.creds "fedstat-ca fleet credentials v1\n${swapped}\n")
expect(1 "swapped.creds:2: the private key of client 1 is not its certificate's key" verify
       --ca-public ${OUT}/ca.pub --creds ${OUT}/swapped.creds)
file(WRITE ${OUT}/twice.creds "fedstat-ca fleet credentials v1\n${line1}\n${line1}\n")
expect(1 "twice.creds:3: client id 1 appears twice" verify --ca-public ${OUT}/ca.pub
       --creds ${OUT}/twice.creds)
file(WRITE ${OUT}/badhex.creds "fedstat-ca fleet credentials v1\n1 xyz ${device_key} 00\n")
expect(1 "badhex.creds:2: the private key is not hex" verify --ca-public ${OUT}/ca.pub
       --creds ${OUT}/badhex.creds)
file(WRITE ${OUT}/fields.creds "fedstat-ca fleet credentials v1\n1 2 3\n")
expect(1 "fields.creds:2: expected 4 fields" verify --ca-public ${OUT}/ca.pub
       --creds ${OUT}/fields.creds)
string(REGEX REPLACE "^1 " "0 " zero_id "${line1}")
file(WRITE ${OUT}/zero.creds "fedstat-ca fleet credentials v1\n${zero_id}\n")
expect(1 "zero.creds:2: the client id '0' must be a whole number in \\[1, 2\\^31\\]" verify
       --ca-public ${OUT}/ca.pub --creds ${OUT}/zero.creds)
expect(1 "give --creds" verify --ca-public ${OUT}/ca.pub)
# ---- X.509 (mutual TLS): ca.crt from init and ca-cert, server-cert, issue's fleet.crt, sign's
# --out-certificate; checked by OpenSSL (an independent X.509 implementation) where it is installed.
foreach(written ca.crt fleet.crt)
  if(NOT EXISTS ${OUT}/${written})
    message(FATAL_ERROR "init/issue did not write ${written}")
  endif()
endforeach()
file(READ ${OUT}/fleet.crt x509_fleet)
string(REGEX MATCHALL "fedstat-device [0-9]+\n-----BEGIN CERTIFICATE-----" blocks "${x509_fleet}")
list(LENGTH blocks x509_n)
if(NOT x509_n EQUAL 5)
  message(FATAL_ERROR "issue --count 5 wrote ${x509_n} X.509 certificates")
endif()
expect(0 "" ca-cert --ca-key ${OUT}/ca.key --out ${OUT}/ca_again.crt)
expect(1 "already exists" ca-cert --ca-key ${OUT}/ca.key --out ${OUT}/ca_again.crt)
expect(1 "not a CA private key file" ca-cert --ca-key ${OUT}/ca.pub --out ${OUT}/w.crt)
expect(0 "server certificate for 127.0.0.1" server-cert --ca-key ${OUT}/ca.key --name 127.0.0.1
       --out-certificate ${OUT}/server.crt --out-key ${OUT}/server.key)
expect(1 "only letters, digits" server-cert --ca-key ${OUT}/ca.key --name "a b"
       --out-certificate ${OUT}/bad.crt --out-key ${OUT}/bad.key)
expect(1 "already exists" server-cert --ca-key ${OUT}/ca.key --name x.example
       --out-certificate ${OUT}/server.crt --out-key ${OUT}/other_server.key)
if(EXISTS ${OUT}/bad.key OR EXISTS ${OUT}/other_server.key)
  message(FATAL_ERROR "a refused server-cert left a file behind")
endif()
expect(0 "^42 " sign --ca-key ${OUT}/ca.key --id 42 --public-key ${device_key}
       --out-certificate ${OUT}/42.crt)
find_program(OPENSSL openssl)
if(OPENSSL)
  function(openssl_ok)
    execute_process(COMMAND ${OPENSSL} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "openssl ${ARGN}: ${err}${out}")
    endif()
    set(openssl_out "${out}" PARENT_SCOPE)
  endfunction()
  openssl_ok(verify -CAfile ${OUT}/ca.crt -purpose sslserver ${OUT}/server.crt)
  openssl_ok(verify -CAfile ${OUT}/ca.crt -purpose sslclient ${OUT}/42.crt)
  openssl_ok(x509 -in ${OUT}/42.crt -noout -subject -pubkey)
  if(NOT openssl_out MATCHES "CN ?= ?fedstat-device 42")
    message(FATAL_ERROR "device 42's certificate names another subject: ${openssl_out}")
  endif()
  openssl_ok(x509 -in ${OUT}/server.crt -noout -ext subjectAltName)
  if(NOT openssl_out MATCHES "DNS:127.0.0.1" OR NOT openssl_out MATCHES "IP Address:127.0.0.1")
    message(FATAL_ERROR "server.crt's subjectAltName: ${openssl_out}")
  endif()
  openssl_ok(x509 -in ${OUT}/ca.crt -noout -ext basicConstraints)
  if(NOT openssl_out MATCHES "CA:TRUE")
    message(FATAL_ERROR "ca.crt is not a CA certificate: ${openssl_out}")
  endif()
  execute_process(COMMAND ${OPENSSL} verify -CAfile ${OUT}/other.crt ${OUT}/42.crt
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    message(FATAL_ERROR "device 42's certificate verifies under another CA's ca.crt")
  endif()
endif()
message(STATUS "fedstat-ca: init, issue, sign and verify as documented, and each refusal")
