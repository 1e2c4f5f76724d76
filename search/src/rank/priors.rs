//! The priors a fused score is multiplied by, each named: the path weight,
//! the question form's doctype prior, brevity and the runtime weight.

use cairn_index::Doctype;

/// One prior, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prior {
    /// The path weight (`weights.yaml`, by extension and folder).
    Path,
    /// The question form's doctype prior ([`form_prior`]).
    Form,
    /// Against chunks too short to answer ([`brevity`]).
    Brevity,
    /// An admin's runtime weight for the document.
    Runtime,
}

impl Prior {
    /// Every prior, in the order they are reported.
    pub const ALL: [Prior; 4] = [Prior::Path, Prior::Form, Prior::Brevity, Prior::Runtime];

    /// Its name (`cairn eval --without-prior NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Prior::Path => "path",
            Prior::Form => "form",
            Prior::Brevity => "brevity",
            Prior::Runtime => "runtime",
        }
    }

    /// The prior a name names.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == name.trim())
    }
}

/// The priors one chunk's fused score was multiplied by, each named, so an
/// evaluation can see each and measure it by switching it off.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Priors {
    /// The path weight.
    pub path: f32,
    /// The question form's doctype prior.
    pub form: f32,
    /// The brevity prior.
    pub brevity: f32,
    /// The runtime weight.
    pub runtime: f32,
}

impl Default for Priors {
    /// No prior: every multiplier 1.
    fn default() -> Self {
        Self {
            path: 1.0,
            form: 1.0,
            brevity: 1.0,
            runtime: 1.0,
        }
    }
}

impl Priors {
    /// The weight they make together (the breakdown's `weight`).
    pub fn product(&self) -> f32 {
        self.path * self.form * self.brevity * self.runtime
    }

    /// The value of one prior.
    pub fn of(&self, prior: Prior) -> f32 {
        match prior {
            Prior::Path => self.path,
            Prior::Form => self.form,
            Prior::Brevity => self.brevity,
            Prior::Runtime => self.runtime,
        }
    }

    /// The same with the priors in `off` counting 1.
    pub fn without(mut self, off: &[Prior]) -> Self {
        for p in off {
            *match p {
                Prior::Path => &mut self.path,
                Prior::Form => &mut self.form,
                Prior::Brevity => &mut self.brevity,
                Prior::Runtime => &mut self.runtime,
            } = 1.0;
        }
        self
    }
}

/// A prior against chunks too short to answer anything (a lone heading, a
/// one-line cell): BM25's length normalisation otherwise favours them.
/// 1.0 from 64 tokens up, falling to 0.5 for the shortest.
pub fn brevity(tokens: u32) -> f32 {
    ((tokens as f32) / 64.0).sqrt().clamp(0.5, 1.0)
}

/// What a question asks for, read from its wording: the form decides which
/// doctype gets a prior (see [`form_prior`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuestionForm {
    /// "how does X compute…", "how is…": how the code works.
    Mechanism,
    /// About building, testing in CI or releasing the package.
    Build,
    /// Anything else: no prior.
    Other,
}

/// Words that make a question one about building or releasing. "install" is
/// not among them: install questions are answered by docs and READMEs.
const BUILD_WORDS: [&str; 15] = [
    "ci", "workflow", "release", "released", "pypi", "wheel", "wheels", "docker", "makefile",
    "cmake", "doctest", "doctests", "compile", "build", "built",
];

/// Reads the question's form.
pub fn question_form(query: &str) -> QuestionForm {
    let q = query.trim().to_lowercase();
    if q.split(|c: char| !c.is_alphanumeric())
        .any(|w| BUILD_WORDS.contains(&w))
    {
        QuestionForm::Build
    } else if ["how does ", "how is ", "how are "]
        .iter()
        .any(|p| q.starts_with(p))
    {
        QuestionForm::Mechanism
    } else {
        QuestionForm::Other
    }
}

/// The prior a doctype gets under a question form. A mechanism question's
/// answer is the code that does it, not the page describing its use (1.3); a
/// build question's answer is a workflow, Makefile or pyproject, whose
/// extension weight (0.7 in `config/weights.yaml`) this lifts back (1.4).
/// Measured in docs/QUALITY.md (issue 19); a doc prior for "what is"/"why"
/// and an example prior for "how do I" were measured too and moved nothing.
pub fn form_prior(form: QuestionForm, doctype: Doctype) -> f32 {
    match (form, doctype) {
        (QuestionForm::Mechanism, Doctype::Code) => 1.3,
        (QuestionForm::Build, Doctype::Config) => 1.4,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_forms_and_their_priors() {
        assert_eq!(
            question_form("How does emcee detect blobs?"),
            QuestionForm::Mechanism
        );
        assert_eq!(
            question_form("which python versions is corner tested on in CI"),
            QuestionForm::Build
        );
        assert_eq!(question_form("build the paper PDF"), QuestionForm::Build);
        // "builder" and "cinema" are not build words: whole words only.
        assert_eq!(
            question_form("the builder pattern in cinema"),
            QuestionForm::Other
        );
        assert_eq!(
            question_form("install corner from source"),
            QuestionForm::Other
        );
        assert_eq!(form_prior(QuestionForm::Mechanism, Doctype::Code), 1.3);
        assert_eq!(form_prior(QuestionForm::Mechanism, Doctype::Doc), 1.0);
        assert_eq!(form_prior(QuestionForm::Build, Doctype::Config), 1.4);
        assert_eq!(form_prior(QuestionForm::Other, Doctype::Config), 1.0);
    }
}
