//! The `drivescope` binary: parse the command line, run the command, report errors.

fn main() {
    println!("drivescope");
}
