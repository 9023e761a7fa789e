//! The tuner's points as a study: `readlab tune` measures them (its search is in `crate::tune`), so
//! `readlab study` does not run this one, but results files and the report know it by name.

use super::{Exec, StudySpec, Summary};

pub static SPEC: StudySpec = StudySpec {
    name: "tune",
    title: "Tuner search",
    describe: "the points `readlab tune` measured while searching for the selected parameters",
    in_all: false,
    exec: Exec::External,
    summary: Summary::None,
};
