"""Root conftest: the plugin's own tests drive inner pytest runs through `pytester`."""

pytest_plugins = ["pytester"]
