"""Packaging for personalwab. Metadata and requirements live in settings.ini (nbdev 2)."""
from configparser import ConfigParser
import setuptools

cfg = ConfigParser(delimiters=["="])
cfg.read("settings.ini", encoding="utf-8")
cfg = cfg["DEFAULT"]

def reqs(key): return cfg.get(key, "").split()

extras = {"train": reqs("train_requirements"), "dev": reqs("dev_requirements"), "web": reqs("web_requirements"),
          "ray": reqs("ray_requirements")}
extras["all"] = extras["train"] + extras["dev"] + extras["web"] + extras["ray"]
licenses = {"apache2": ("Apache Software License 2.0", "OSI Approved :: Apache Software License")}
lic = licenses[cfg["license"]]

setuptools.setup(
    name=cfg["lib_name"], version=cfg["version"], description=cfg["description"],
    long_description=open("README.md", encoding="utf-8").read(), long_description_content_type="text/markdown",
    author=cfg["author"], author_email=cfg["author_email"], license=lic[0], url=cfg["git_url"],
    keywords=cfg["keywords"], python_requires=f">={cfg['min_python']}",
    classifiers=["Programming Language :: Python :: 3", f"License :: {lic[1]}", "Natural Language :: English"],
    packages=setuptools.find_packages(include=["personalwab", "personalwab.*"]), include_package_data=True,
    # data files the library reads at run time (the generator's catalog vocabulary, personalwab/catalog.json; the shipped
    # SASRec weights of the embedded benchmark, personalwab/env/weights/):
    # without this, only an editable install would find them
    package_data={"personalwab": ["*.json", "env/weights/sasrec/*/*"]},
    install_requires=reqs("requirements"), extras_require=extras, zip_safe=False,
    entry_points={"console_scripts": cfg.get("console_scripts", "").split(),
                  "nbdev": [f"{cfg['lib_path']}={cfg['lib_path']}._modidx:d"]},
)
