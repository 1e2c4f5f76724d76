//! Explain over a real index built from git repositories with the tiny model:
//! a C++ throw and a Fortran stop found by their messages, and what a
//! caller's groups hide.

use cairn_embed::DevicePref;
use cairn_pipeline::fixtures::Sandbox;
use cairn_pipeline::{Silent, build};
use cairn_search::{Code, Engine, EngineOptions, ExplainRequest};

fn engine(sandbox: &Sandbox) -> Engine {
    build(&sandbox.options("index"), &Silent).expect("build");
    Engine::open(&EngineOptions {
        index: sandbox.path("index"),
        model_dir: Some(sandbox.path("model")),
        device: DevicePref::Cpu,
    })
    .expect("open")
}

fn ask(text: &str, groups: Option<Vec<String>>) -> ExplainRequest {
    ExplainRequest {
        text: text.into(),
        groups,
        ..Default::default()
    }
}

#[test]
fn cpp_and_fortran_errors_are_found_by_their_messages() {
    let sandbox = Sandbox::new(
        &[(
            "src/solver.f90",
            b"subroutine solve(n)\n  integer :: n\n  if (n < 1) error stop 'solve: n must be at least 1'\nend subroutine\n".to_vec(),
        )],
        &[(
            "lib/lens.cpp",
            b"#include <stdexcept>\n#include <string>\n\ndouble BinaryMag(double s, double q) {\n    if (q <= 0)\n        throw std::invalid_argument(\"mass ratio q must be positive, got \"\n            + std::to_string(q));\n    return s * q;\n}\n".to_vec(),
        )],
        &["team-a"],
    );
    let e = engine(&sandbox);
    let r = e
        .explain(&ask(
            "terminate called after throwing an instance of 'std::invalid_argument'\n  what():  mass ratio q must be positive, got -1.000000\nAborted (core dumped)\n",
            None,
        ))
        .expect("explain");
    let site = &r.raise_sites[0];
    assert_eq!(
        (
            site.at.doc_id.as_str(),
            site.at.start_line,
            site.at.end_line
        ),
        ("tools/beta/lib/lens.cpp", 6, 7)
    );
    assert_eq!(
        (site.exception.as_str(), site.function.as_str()),
        ("std::invalid_argument", "BinaryMag")
    );
    // pybind11 turns std::invalid_argument into ValueError: the same site.
    let r = e
        .explain(&ask(
            "ValueError: mass ratio q must be positive, got -1.0",
            None,
        ))
        .expect("explain");
    assert_eq!(r.raise_sites[0].at.start_line, 6);

    let fortran = "At line 3 of file solver.f90\nERROR STOP solve: n must be at least 1\n";
    let r = e.explain(&ask(fortran, None)).expect("explain");
    assert_eq!(
        (
            r.raise_sites[0].at.doc_id.as_str(),
            r.raise_sites[0].function.as_str()
        ),
        ("science/alpha/src/solver.f90", "solve")
    );
    // alpha is team-a's: another caller gets no site and no frame there.
    let r = e
        .explain(&ask(fortran, Some(vec!["other".into()])))
        .expect("explain");
    assert!(
        r.raise_sites.is_empty() && r.frames.iter().all(|f| f.at.is_none()),
        "{r:?}"
    );

    let err = e.explain(&ask("\u{1}\u{2}\u{3}", None)).expect_err("junk");
    assert_eq!(err.code(), Code::InvalidArgument);
}
