/** @file
 * fedstat's C ABI (C99; also valid C++): what an app, firmware or another language's binding
 * (Kotlin/JNI, Swift, Rust) calls to take part in private federated analytics, implemented in
 * C++ over the SDK (capi/) with the SDK's rules: no heap, no exceptions, statuses.
 *
 *   - c/base.h:       status codes, FEDSTAT_ALIGNMENT, version, storage directory
 *   - c/histogram.h:  dense and sparse histograms, their blob, the KL answer
 *   - c/sketch.h:     the data-shift sketch and its report
 *   - c/random.h:     CSPRNG and seeded random sources, Skellam noise
 *   - c/tasks.h:      KL calibration, heterogeneity rounds, fixed point, the model update
 *   - c/ledger.h:     the privacy-budget ledger
 *   - c/client.h:     the device Client and the app's channel
 *   - c/credential.h: the device credential for signed DIST rounds (fedstat-ca's)
 *   - c/tls.h:        the TLS-PSK channel to fedstat-server (hosted builds)
 *
 * Conventions (docs/c_abi.md): opaque handles placed in caller memory that the object's
 * fedstat_<object>_size gives (FEDSTAT_ALIGNMENT-aligned), never allocated by fedstat; every
 * fallible call returns a fedstat_status; a refused call changes nothing the handle holds; a
 * handle keeps its last error message; no callback may unwind through fedstat. A handle is not
 * safe to use from two threads at once.
 *
 * @memory each object's formula is in its header.
 * @paper see each header.
 */
#ifndef FEDSTAT_FEDSTAT_H_
#define FEDSTAT_FEDSTAT_H_

#include "c/base.h"
#include "c/client.h"
#include "c/credential.h"
#include "c/histogram.h"
#include "c/ledger.h"
#include "c/random.h"
#include "c/sketch.h"
#include "c/tasks.h"
#include "c/tls.h"

#endif /* FEDSTAT_FEDSTAT_H_ */
