"""The application file for spark-submit: `spark-submit [options] $(sparkmirror submit-args) run mm2.properties`
runs `sparkmirror run` (or any other command) in the driver spark-submit starts, with its `--master`,
`--deploy-mode` and `--conf` settings taking precedence over the file's `spark.*` keys."""

from sparkmirror.cli.main import main

if __name__ == "__main__":
    main()
