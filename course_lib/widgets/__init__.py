"""Thin ipywidgets wrappers over tested functions, one module per notebook topic.

Convention (the browser test relies on it): the key number a dashboard shows lives in an
``ipywidgets.HTML`` with the CSS class ``course-result`` (``w.add_class("course-result")``),
and its text is produced by a tested function, so a test can compare it with course_lib.
"""
