//! One file per command family, as cargo's `commands/` folder: each holds the subcommands of
//! one part of the lecture, thin shells over the core functions the page calls. `likesworld`
//! routes the LikesWorld commands, each once; `options` holds the options the model commands
//! share and the one call that runs an experiment as the page does. No command file imports
//! another but those two.

#[cfg(not(target_arch = "wasm32"))]
pub mod decoding;
pub mod exercises;
pub mod gallery;
#[cfg(not(target_arch = "wasm32"))]
pub mod hidden;
#[cfg(not(target_arch = "wasm32"))]
pub mod learned;
#[cfg(not(target_arch = "wasm32"))]
pub mod likesworld;
#[cfg(not(target_arch = "wasm32"))]
pub mod modelfree;
#[cfg(not(target_arch = "wasm32"))]
pub mod models;
#[cfg(not(target_arch = "wasm32"))]
pub mod options;
pub mod roofline;
pub mod sampling;
#[cfg(not(target_arch = "wasm32"))]
pub mod sequoia;
#[cfg(not(target_arch = "wasm32"))]
pub mod speedup;
pub mod theory;
pub mod tree;
#[cfg(not(target_arch = "wasm32"))]
pub mod treepaths;
#[cfg(not(target_arch = "wasm32"))]
pub mod typical;
