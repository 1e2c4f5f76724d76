//! Each traceback shape the parser knows, and the class names it equates.

use super::run::same_class;
use super::*;

#[test]
fn a_python_traceback_gives_frames_class_and_a_multi_line_message() {
    let p = parse(
        "Traceback (most recent call last):\n  File \"/home/u/fit.py\", line 9, in <module>\n    sampler.run_mcmc(p0, 10)\n  File \"/v/lib/python3.12/site-packages/emcee/ensemble.py\", line 443, in run_mcmc\n    for results in self.sample(initial_state, iterations=nsteps, **kwargs):\n                   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  File \"/v/lib/python3.12/site-packages/emcee/ensemble.py\", line 344, in sample\n    raise ValueError(\"The initial log_prob was NaN\")\nValueError: The initial log_prob was NaN\n  and more\n",
    );
    assert_eq!(p.shape, Shape::PythonTraceback);
    assert_eq!(p.exception.as_deref(), Some("ValueError"));
    assert_eq!(p.message, "The initial log_prob was NaN\n  and more");
    assert_eq!(p.frames.len(), 3);
    assert_eq!(p.frames[1].line, 443);
    assert_eq!(p.frames[1].function, "run_mcmc");
    assert_eq!(
        p.frames[1].source.as_deref(),
        Some("for results in self.sample(initial_state, iterations=nsteps, **kwargs):"),
        "the caret line is not the source"
    );
    assert_eq!(
        p.frames[2].source.as_deref(),
        Some("raise ValueError(\"The initial log_prob was NaN\")")
    );
}

#[test]
fn a_chained_traceback_is_read_by_its_last_part_and_dotted_classes_keep_their_name() {
    let p = parse(
        "Traceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\nKeyError: 'x'\n\nDuring handling of the above exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"/s/emcee/autocorr.py\", line 100, in integrated_time\n    raise AutocorrError(msg)\nemcee.autocorr.AutocorrError: The chain is shorter than 50 times the integrated autocorrelation time for 5 parameter(s).\n",
    );
    assert_eq!(p.frames.len(), 1);
    assert_eq!(p.frames[0].file, "/s/emcee/autocorr.py");
    assert_eq!(p.class_name(), Some("AutocorrError"));
    assert!(p.message.starts_with("The chain is shorter"));
}

#[test]
fn a_jupyter_traceback_gives_its_frames_and_numbered_source() {
    let p = parse(
        "---------------------------------------------------------------------------\nValueError                                Traceback (most recent call last)\nCell In[4], line 2\n      1 s = emcee.EnsembleSampler(3, 5, lp)\n----> 2 s.run_mcmc(p0, 10)\n\nFile ~/v/lib/python3.12/site-packages/emcee/ensemble.py:344, in EnsembleSampler.sample(self, initial_state, log_prob0, rstate0, blobs0, iterations, tune, skip_initial_state_check, thin_by, thin, store, progress, progress_kwargs)\n    342 if not skip_initial_state_check:\n--> 344     raise ValueError(\"The initial log_prob was NaN\")\n\nValueError: The initial log_prob was NaN",
    );
    assert_eq!(p.shape, Shape::NotebookTraceback);
    assert_eq!(p.frames.len(), 2);
    assert_eq!(p.frames[0].file, "Cell In[4]");
    assert_eq!(p.frames[0].source.as_deref(), Some("s.run_mcmc(p0, 10)"));
    assert_eq!(
        p.frames[1].file,
        "~/v/lib/python3.12/site-packages/emcee/ensemble.py"
    );
    assert_eq!(
        (p.frames[1].line, p.frames[1].function.as_str()),
        (344, "EnsembleSampler.sample")
    );
    assert_eq!(
        p.frames[1].source.as_deref(),
        Some("raise ValueError(\"The initial log_prob was NaN\")")
    );
    assert_eq!(p.message, "The initial log_prob was NaN");
}

#[test]
fn warnings_cpp_fortran_and_plain_messages() {
    let w = parse(
        "/v/site-packages/dynesty/dynamicsampler.py:1021: UserWarning: Beware! Having `nlive <= 2 * ndim` is extremely risky!\n  warnings.warn(\"Beware! Having `nlive <= 2 * ndim` is extremely risky!\")\n",
    );
    assert_eq!(w.shape, Shape::PythonWarning);
    assert_eq!(w.exception.as_deref(), Some("UserWarning"));
    assert_eq!(w.frames[0].line, 1021);
    assert!(w.message.starts_with("Beware!"));

    let c = parse(
        "terminate called after throwing an instance of 'std::invalid_argument'\n  what():  s must be positive\nAborted (core dumped)\n",
    );
    assert_eq!(c.shape, Shape::CppException);
    assert_eq!(c.class_name(), Some("invalid_argument"));
    assert_eq!(c.message, "s must be positive");

    let f = parse(
        "At line 42 of file solver.f90 (unit = 10, file = 'in.dat')\nFortran runtime error: End of file\n",
    );
    assert_eq!(f.shape, Shape::FortranRuntime);
    assert_eq!(
        (f.frames[0].file.as_str(), f.frames[0].line),
        ("solver.f90", 42)
    );
    assert_eq!(f.message, "End of file");

    let m = parse(
        "ValueError: It is unadvisable to use a red-blue move with fewer walkers than twice the number of dimensions.",
    );
    assert_eq!(m.shape, Shape::Message);
    assert_eq!(m.exception.as_deref(), Some("ValueError"));
    let m = parse("the fit does not converge, chi2 is nan");
    assert_eq!((m.shape, m.exception.as_deref()), (Shape::Message, None));
}

#[test]
fn junk_parses_to_a_message_without_panicking() {
    for text in [
        "\u{0}\u{1}\u{fffd}\u{fffd}",
        "File \"x\", line",
        "File x:, in",
        "At line  of file ",
        ":::",
        "Traceback (most recent call last):\n  File \"a\", line 99999999999, in f\n",
    ] {
        let _ = parse(text);
    }
    let long = "x".repeat(MAX_TEXT_BYTES);
    assert_eq!(parse(&long).message.len(), MAX_TEXT_BYTES);
}

#[test]
fn cpp_classes_answer_to_their_python_names() {
    assert!(same_class("ValueError", "std::invalid_argument"));
    assert!(same_class("RuntimeError", "std::runtime_error"));
    assert!(same_class("emcee.autocorr.AutocorrError", "AutocorrError"));
    assert!(!same_class("KeyError", "ValueError"));
}
