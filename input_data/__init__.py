"""Input data: dataset descriptions and shard scans (dataset_info.py), image preprocessing ops
(image_processing.py), CIFAR-10 batches (cifar10_data.py), the lookup of an undecodable image
(bad_images.py) and the converter's hint for a folder of images (image_folders.py).
The pipelines that use them are in preprocessing.py.
"""
