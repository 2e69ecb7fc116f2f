//! The build script: for a Windows target it gives `flychess.exe` its icon and its version
//! information (Explorer's Properties → Details) through a resource script compiled with
//! embed-resource (mingw-w64's windres when cross-compiling from Linux). For every other target it
//! does nothing.
// The build script writes into OUT_DIR; app/clippy.toml forbids files to the window only.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        return;
    }
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let icon = manifest_dir.join("../installer/icons/flychess.ico");
    println!("cargo:rerun-if-changed={}", icon.display());
    let version = std::env::var("CARGO_PKG_VERSION").expect("cargo sets CARGO_PKG_VERSION");
    // VERSIONINFO wants four numbers: MAJOR,MINOR,PATCH,0 (a pre-release suffix is dropped there
    // and kept in the strings).
    let mut numbers: Vec<u32> = version.split(['.', '-', '+']).take(3).map(|part| part.parse().unwrap_or(0)).collect();
    numbers.resize(4, 0);
    let binary_version = numbers.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let script = format!(
        r#"#include <winver.h>
1 ICON "{icon}"
1 VERSIONINFO
FILEVERSION {binary_version}
PRODUCTVERSION {binary_version}
FILEOS VOS_NT_WINDOWS32
FILETYPE VFT_APP
BEGIN
  BLOCK "StringFileInfo"
  BEGIN
    BLOCK "040904B0"
    BEGIN
      VALUE "CompanyName", "Fly Chess developers"
      VALUE "FileDescription", "Fly Chess: a whole fruit-fly brain learns and plays chess"
      VALUE "FileVersion", "{version}"
      VALUE "InternalName", "flychess"
      VALUE "LegalCopyright", "GPL-3.0-or-later; FlyWire data CC BY-NC 4.0"
      VALUE "OriginalFilename", "flychess.exe"
      VALUE "ProductName", "Fly Chess"
      VALUE "ProductVersion", "{version}"
    END
  END
  BLOCK "VarFileInfo"
  BEGIN
    VALUE "Translation", 0x409, 1200
  END
END
"#,
        icon = icon.display().to_string().replace('\\', "/"),
    );
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("flychess.rc");
    std::fs::write(&out, script).expect("the resource script is written to OUT_DIR");
    embed_resource::compile_for(&out, ["flychess"], embed_resource::NONE)
        .manifest_optional()
        .expect("the Windows resources (icon, version) compile: mingw-w64's windres is needed");
}
