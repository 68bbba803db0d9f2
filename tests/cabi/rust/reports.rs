// The C ABI from Rust: plain `extern "C"` declarations (no crates, no bindgen), built by Debian's
// rustc as a static library and linked by the C++ driver with libfedstat_c.a (tests/cabi/
// CMakeLists.txt). It builds a sparse histogram, its data-shift sketch report for a fixed seed,
// and a ledger's stored blob after a fixed list of charges, and compares each byte for byte with
// the C++ API's output for the same inputs (tests/cabi/cabi_reference.h). Called from
// rust_main.c with the scratch directory; returns 0 when every check holds.
#![allow(non_camel_case_types)]

use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};

type fedstat_status = i32;
const FEDSTAT_OK: fedstat_status = 0;
const FEDSTAT_INVALID_ARGUMENT: fedstat_status = 1;
const FEDSTAT_RESOURCE_EXHAUSTED: fedstat_status = 3;
const FEDSTAT_HISTOGRAM_SPARSE: i32 = 2;
const ORDER_COUNT: usize = 17;

#[repr(C)]
struct fedstat_histogram {
    _private: [u8; 0],
}
#[repr(C)]
struct fedstat_sketch {
    _private: [u8; 0],
}
#[repr(C)]
struct fedstat_ledger {
    _private: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy)]
struct fedstat_sketch_params {
    rows: u32,
    width: u32,
    heap_capacity: u32,
    k: u32,
    buffer_slots: u32,
    seed: [u8; 32],
}

#[repr(C)]
struct fedstat_ledger_config {
    epsilon_budget: f64,
    delta_budget: f64,
    window_seconds: u64,
    blob_name: *const c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct fedstat_privacy_spend {
    task_id: u32,
    epsilon: f64,
    delta: f64,
    has_rdp: i32,
    rdp: [f64; ORDER_COUNT],
}

extern "C" {
    fn fedstat_version() -> *const c_char;
    fn fedstat_status_name(status: fedstat_status) -> *const c_char;
    fn fedstat_set_storage_directory(directory: *const c_char) -> fedstat_status;

    fn fedstat_histogram_sparse_size(capacity: usize, bytes: *mut usize) -> fedstat_status;
    fn fedstat_histogram_create_sparse(
        memory: *mut u8,
        memory_bytes: usize,
        capacity: usize,
        out: *mut *mut fedstat_histogram,
    ) -> fedstat_status;
    fn fedstat_histogram_add(h: *mut fedstat_histogram, item: u32, count: u32) -> fedstat_status;
    fn fedstat_histogram_last_error(h: *const fedstat_histogram) -> *const c_char;

    fn fedstat_sketch_size(params: *const fedstat_sketch_params, bytes: *mut usize)
        -> fedstat_status;
    fn fedstat_sketch_create(
        memory: *mut u8,
        memory_bytes: usize,
        params: *const fedstat_sketch_params,
        out: *mut *mut fedstat_sketch,
    ) -> fedstat_status;
    fn fedstat_sketch_add_histogram(
        s: *mut fedstat_sketch,
        h: *const fedstat_histogram,
    ) -> fedstat_status;
    fn fedstat_sketch_report_size(s: *mut fedstat_sketch, bytes: *mut usize) -> fedstat_status;
    fn fedstat_sketch_serialize(
        s: *mut fedstat_sketch,
        out: *mut u8,
        capacity: usize,
        written: *mut usize,
    ) -> fedstat_status;

    fn fedstat_ledger_size(capacity: usize, bytes: *mut usize) -> fedstat_status;
    fn fedstat_ledger_create(
        memory: *mut u8,
        memory_bytes: usize,
        config: *const fedstat_ledger_config,
        capacity: usize,
        out: *mut *mut fedstat_ledger,
    ) -> fedstat_status;
    fn fedstat_ledger_load(l: *mut fedstat_ledger) -> fedstat_status;
    fn fedstat_ledger_check(
        l: *mut fedstat_ledger,
        spend: *const fedstat_privacy_spend,
        now: u64,
    ) -> fedstat_status;
    fn fedstat_ledger_charge(
        l: *mut fedstat_ledger,
        spend: *const fedstat_privacy_spend,
        now: u64,
    ) -> fedstat_status;

    // The C++ API's side (tests/cabi/cabi_reference.h).
    fn cabi_ref_sketch_from_histogram(
        params: *const fedstat_sketch_params,
        kind: i32,
        slots: usize,
        ids: *const u32,
        counts: *const u32,
        n: usize,
        out: *mut u8,
        capacity: usize,
        written: *mut usize,
    ) -> c_int;
    fn cabi_ref_ledger(
        directory: *const c_char,
        config: *const fedstat_ledger_config,
        capacity: usize,
        spends: *const fedstat_privacy_spend,
        now: *const u64,
        n: usize,
        statuses: *mut i32,
    ) -> c_int;
}

struct Checks {
    failures: u32,
}

impl Checks {
    fn check(&mut self, ok: bool, what: &str) {
        if !ok {
            self.failures += 1;
            println!("FAILED (rust): {}", what);
        }
    }
    fn ok(&mut self, status: fedstat_status, what: &str) {
        let name = unsafe { CStr::from_ptr(fedstat_status_name(status)) };
        self.check(status == FEDSTAT_OK, &format!("{} returned {:?}", what, name));
    }
}

// Caller memory for a handle: u64 words, so FEDSTAT_ALIGNMENT (8) holds.
fn memory(bytes: usize) -> Vec<u64> {
    vec![0u64; (bytes + 7) / 8]
}

// The adds of the histogram: a skewed law over 5000 ids, from a fixed LCG.
fn adds() -> (Vec<u32>, Vec<u32>) {
    let mut state: u64 = 2024;
    let mut ids = Vec::new();
    let mut counts = Vec::new();
    for _ in 0..700 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ids.push((((state >> 33) % 5000) * ((state >> 21) % 5000) / 5000) as u32);
        counts.push(1 + ((state >> 52) % 4) as u32);
    }
    (ids, counts)
}

fn sketch_report(c: &mut Checks) {
    let (ids, counts) = adds();
    let capacity: usize = 1024;
    let mut bytes = 0usize;
    c.ok(unsafe { fedstat_histogram_sparse_size(capacity, &mut bytes) }, "histogram size");
    let mut hist_memory = memory(bytes);
    let mut h: *mut fedstat_histogram = std::ptr::null_mut();
    c.ok(
        unsafe {
            fedstat_histogram_create_sparse(
                hist_memory.as_mut_ptr() as *mut u8,
                bytes,
                capacity,
                &mut h,
            )
        },
        "histogram create",
    );
    for (id, count) in ids.iter().zip(counts.iter()) {
        c.ok(unsafe { fedstat_histogram_add(h, *id, *count) }, "histogram add");
    }
    // A task's shape: R 5, w 200, H 64, k 256, the task seed.
    let mut params = fedstat_sketch_params {
        rows: 5,
        width: 200,
        heap_capacity: 64,
        k: 256,
        buffer_slots: 0,
        seed: [0u8; 32],
    };
    for (i, b) in params.seed.iter_mut().enumerate() {
        *b = (13 * i + 5) as u8;
    }
    c.ok(unsafe { fedstat_sketch_size(&params, &mut bytes) }, "sketch size");
    let mut sketch_memory = memory(bytes);
    let mut s: *mut fedstat_sketch = std::ptr::null_mut();
    c.ok(
        unsafe { fedstat_sketch_create(sketch_memory.as_mut_ptr() as *mut u8, bytes, &params, &mut s) },
        "sketch create",
    );
    c.ok(unsafe { fedstat_sketch_add_histogram(s, h) }, "sketch add_histogram");
    let mut report_size = 0usize;
    c.ok(unsafe { fedstat_sketch_report_size(s, &mut report_size) }, "report size");
    let mut got = vec![0u8; report_size];
    let mut written = 0usize;
    c.ok(
        unsafe { fedstat_sketch_serialize(s, got.as_mut_ptr(), got.len(), &mut written) },
        "sketch serialize",
    );
    let mut want = vec![0u8; 1 << 16];
    let mut want_size = 0usize;
    let rc = unsafe {
        cabi_ref_sketch_from_histogram(
            &params,
            FEDSTAT_HISTOGRAM_SPARSE,
            capacity,
            ids.as_ptr(),
            counts.as_ptr(),
            ids.len(),
            want.as_mut_ptr(),
            want.len(),
            &mut want_size,
        )
    };
    c.check(rc == 0, "the C++ reference sketch failed");
    c.check(
        written == report_size && written == want_size && got[..written] == want[..want_size],
        &format!("sketch report from Rust ({} B) differs from C++ ({} B)", written, want_size),
    );
    c.check(&got[..4] == b"FSK1", "the report does not start with FSK1");
    // A refusal through the ABI: too small a buffer, with a message on the handle.
    let mut small = [0u8; 16];
    let status = unsafe { fedstat_sketch_serialize(s, small.as_mut_ptr(), small.len(), &mut written) };
    c.check(status == FEDSTAT_RESOURCE_EXHAUSTED, "a 16-byte buffer was not refused");
    let last = unsafe { CStr::from_ptr(fedstat_histogram_last_error(h)) };
    c.check(last.to_bytes().is_empty(), "the histogram holds an error it never had");
    drop(sketch_memory);
    drop(hist_memory);
}

fn ledger(c: &mut Checks, directory: &str) {
    let dir = CString::new(directory).unwrap();
    let c_name = CString::new("rust-ledger-c").unwrap();
    let cpp_name = CString::new("rust-ledger-cpp").unwrap();
    for name in [&c_name, &cpp_name] {
        let _ = std::fs::remove_file(format!("{}/{}", directory, name.to_str().unwrap()));
    }
    let t0: u64 = 1_800_000_000;
    let mut spends = Vec::new();
    let mut now = Vec::new();
    for i in 0..5u32 {
        spends.push(fedstat_privacy_spend {
            task_id: 100 + i,
            epsilon: 0.25 + 0.05 * f64::from(i),
            delta: 1e-9,
            has_rdp: 0,
            rdp: [0.0; ORDER_COUNT],
        });
        now.push(t0 + 60 * u64::from(i));
    }
    let mut config = fedstat_ledger_config {
        epsilon_budget: 1.0,
        delta_budget: 1e-6,
        window_seconds: 3600,
        blob_name: cpp_name.as_ptr(),
    };
    let mut want_status = vec![0i32; spends.len()];
    let rc = unsafe {
        cabi_ref_ledger(
            dir.as_ptr(),
            &config,
            8,
            spends.as_ptr(),
            now.as_ptr(),
            spends.len(),
            want_status.as_mut_ptr(),
        )
    };
    c.check(rc == 0, "the C++ reference ledger failed");

    config.blob_name = c_name.as_ptr();
    c.ok(unsafe { fedstat_set_storage_directory(dir.as_ptr()) }, "storage directory");
    let mut bytes = 0usize;
    c.ok(unsafe { fedstat_ledger_size(8, &mut bytes) }, "ledger size");
    let mut ledger_memory = memory(bytes);
    let mut l: *mut fedstat_ledger = std::ptr::null_mut();
    c.ok(
        unsafe { fedstat_ledger_create(ledger_memory.as_mut_ptr() as *mut u8, bytes, &config, 8, &mut l) },
        "ledger create",
    );
    c.ok(unsafe { fedstat_ledger_load(l) }, "ledger load");
    let mut refused = 0;
    for i in 0..spends.len() {
        let predicted = unsafe { fedstat_ledger_check(l, &spends[i], now[i]) };
        let charged = unsafe { fedstat_ledger_charge(l, &spends[i], now[i]) };
        c.check(charged == want_status[i], &format!("charge {}: {} (C++ {})", i, charged, want_status[i]));
        c.check(predicted == charged, &format!("check {} predicted {}, charge {}", i, predicted, charged));
        if charged == FEDSTAT_RESOURCE_EXHAUSTED {
            refused += 1;
        }
    }
    c.check(refused > 0, "the budget never ran out: the scenario tests nothing");
    let bad = fedstat_privacy_spend { epsilon: f64::NAN, ..spends[0] };
    c.check(
        unsafe { fedstat_ledger_charge(l, &bad, t0 + 999) } == FEDSTAT_INVALID_ARGUMENT,
        "a NaN epsilon was not refused",
    );
    let got = std::fs::read(format!("{}/rust-ledger-c", directory)).unwrap_or_default();
    let want = std::fs::read(format!("{}/rust-ledger-cpp", directory)).unwrap_or_default();
    c.check(!got.is_empty() && got == want, &format!("stored ledger from Rust ({} B) differs from C++ ({} B)", got.len(), want.len()));
    drop(ledger_memory);
}

#[no_mangle]
pub extern "C" fn fedstat_rust_reports_main(directory: *const c_char) -> c_int {
    let directory = unsafe { CStr::from_ptr(directory) }.to_str().unwrap().to_owned();
    let mut c = Checks { failures: 0 };
    let version = unsafe { CStr::from_ptr(fedstat_version()) };
    println!("fedstat {} from Rust", version.to_str().unwrap());
    sketch_report(&mut c);
    ledger(&mut c, &directory);
    println!("cabi rust: {} ({} failed checks)", if c.failures == 0 { "ok" } else { "FAILED" }, c.failures);
    if c.failures == 0 { 0 } else { 1 }
}
